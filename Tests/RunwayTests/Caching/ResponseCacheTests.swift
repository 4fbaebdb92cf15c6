import Dispatch
import Foundation
import GRDB
import HTTPTypes
import Logging
import Runway
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

/// A temporary container for a disk tier, removed afterwards.
final class CacheRoot: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    var container: Container { Container(root: url) }
    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite("Response cache: tiers, keys, expiry, management", .timeLimit(.minutes(10)))
@MainActor
struct ResponseCacheTests {
    let root: CacheRoot
    let clock: TestBox<Date>
    let log = LogCapture()

    init() throws {
        root = try CacheRoot()
        clock = TestBox(Date(timeIntervalSince1970: 1_800_000_000))
    }

    func makeCache(_ limits: ResponseCache.Limits = .init(), container: Bool = true) throws -> ResponseCache {
        let clock = self.clock
        let log = self.log
        return try ResponseCache(
            container: container ? root.container : nil, limits: limits, now: { clock.value },
            logger: Logger(label: "test") { _ in log })
    }

    func cachedAPI(_ policy: CachePolicy = .memoryAndDisk(), path: String = "/echo/cached") -> AdHocAPI {
        var api = AdHocAPI(path: path)
        api.cachePolicy = policy
        return api
    }

    func advance(_ seconds: TimeInterval) { clock.set(clock.value.addingTimeInterval(seconds)) }

    @Test("a load is answered before its disk write, which runs on the disk queue; a later disk read sees it")
    func diskWriteAfterDelivery() async throws {
        let cache = try makeCache()
        let disk = try #require(cache.disk)
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(path: "/faults/gate/disk-queue"), engine: harness.engine)
            let loading = Task { try await manager.load(with: ["q": "queued"]) }
            // The cache lookup is done once the request waits at the server; now hold the disk
            // queue, as a slow disk would, and let the answer come.
            await harness.probe.wait(for: .gateWaiting)
            let release = DispatchSemaphore(value: 0)
            disk.queue.async { release.wait() }
            harness.probe.openGate("disk-queue")
            let first = try await loading.value
            #expect(first.origin == .network)
            #expect(disk.count == 0, "the answer must not wait for the disk write")
            release.signal()
            await cache.waitForDiskWork()
            #expect(disk.count == 1)
            cache.purge()
            let fromDisk = try await manager.load(with: ["q": "queued"])
            #expect(fromDisk.origin == .cache(tier: .disk, age: .zero, isStale: false))
        }
    }

    @Test("the memory tier counts the parsed tree it holds, and a disk hit is promoted with its tree")
    func memoryCostAndPromotion() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(path: "/listings/esf"), engine: harness.engine)
            let first = try await manager.load(with: ["page_size": 20])
            let held = cache.memoryUsage
            #expect(held.count == 1)
            #expect(held.bytes > 2 * first.body.count, "the tree of a listing page costs more than its bytes")
            cache.purge()
            let promoted = try await manager.load(with: ["page_size": 20])
            #expect(promoted.origin == .cache(tier: .disk, age: .zero, isStale: false))
            #expect(cache.memoryUsage.bytes == held.bytes, "the promoted entry holds its tree again")
            let memoryHit = try await manager.load(with: ["page_size": 20])
            #expect(memoryHit.origin == .cache(tier: .memory, age: .zero, isStale: false))
            #expect(memoryHit.json == first.json)
            #expect(harness.probe.count("/listings/esf") == 1)
        }
    }

    @Test("memory, then disk, then network: hits, expiry per tier, promotion, and the age of what is delivered")
    func tiersAndExpiry() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(), engine: harness.engine)
            let first = try await manager.load(with: ["q": "1"])
            #expect(first.origin == .network)
            let second = try await manager.load(with: ["q": "1"])
            #expect(second.origin == .cache(tier: .memory, age: .zero, isStale: false))
            #expect(second.json == first.json)
            #expect(harness.probe.count("/echo") == 1)

            advance(200)  // past the memory lifetime (180 s), within the disk lifetime (24 h)
            let third = try await manager.load(with: ["q": "1"])
            #expect(third.origin == .cache(tier: .disk, age: .seconds(200), isStale: false))
            let fourth = try await manager.load(with: ["q": "1"])
            #expect(fourth.origin.isCached)
            guard case .cache(.memory, _, _) = fourth.origin else {
                Issue.record("a disk hit must be promoted to memory, got \(fourth.origin)")
                return
            }
            #expect(harness.probe.count("/echo") == 1)

            advance(86_400)  // past the disk lifetime too
            let fifth = try await manager.load(with: ["q": "1"])
            #expect(fifth.origin == .network)
            #expect(harness.probe.count("/echo") == 2)
        }
    }

    @Test("a removal that lands while a disk hit is read is not undone by the hit's promotion to memory")
    func promotionRacingRemoval() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(), engine: harness.engine)
            try await manager.load(with: ["q": "1"])
            await cache.waitForDiskWork()
            cache.purge()  // the next lookup reads the disk
            // The removal runs between the disk read and the promotion, every time.
            cache.diskReadHooks.withLock { $0.after = { cache.removeAll() } }
            let raced = try await manager.load(with: ["q": "1"])
            cache.diskReadHooks.withLock { $0.after = nil }
            #expect(raced.origin == .cache(tier: .disk, age: .zero, isStale: false), "read before the removal")
            #expect(cache.memoryUsage.count == 0, "the removal emptied memory after the read; nothing comes back")
            await cache.waitForDiskWork()
            #expect(try await manager.load(with: ["q": "1"]).origin == .network)
            #expect(harness.probe.count("/echo") == 2)
        }
    }

    @Test("a memory-only policy expires after its lifetime; ignoring the cache fetches and stores afresh")
    func memoryOnlyAndIgnore() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(.memory(lifetime: .seconds(60))), engine: harness.engine)
            try await manager.load()
            advance(59)
            #expect(try await manager.load().origin.isCached)
            advance(2)
            #expect(try await manager.load().origin == .network)
            #expect(try await manager.load(ignoringCache: true).origin == .network)
            #expect(try await manager.load().origin.isCached)
            #expect(harness.probe.count("/echo") == 3)
            #expect(cache.diskUsage == 0, "a memory-only policy writes nothing to disk")
        }
    }

    @Test("param order does not change the key; ignored params do not either; versions and users separate entries")
    func keys() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            var api = cachedAPI()
            api.cachePolicy.ignoredParams = ["ts"]
            let manager = APIManager(api, engine: harness.engine)
            var forward: Parameters = [:]
            var backward: Parameters = [:]
            for key in ["a", "b", "c", "d", "e", "f"] { forward[key] = .string(key) }
            for key in ["f", "e", "d", "c", "b", "a"] { backward[key] = .string(key) }
            try await manager.load(with: forward.merging(["ts": 1]) { $1 })
            #expect(try await manager.load(with: backward.merging(["ts": 2]) { $1 }).origin.isCached)
            #expect(harness.probe.count("/echo") == 1)

            manager.api.cachePolicy.version = 2
            #expect(try await manager.load(with: forward).origin == .network)
            manager.api.cachePolicy.sensitiveComponent = "user-1"
            #expect(try await manager.load(with: forward).origin == .network)
            manager.api.cachePolicy.sensitiveComponent = "user-2"
            #expect(try await manager.load(with: forward).origin == .network)
            manager.api.cachePolicy.sensitiveComponent = "user-1"
            #expect(try await manager.load(with: forward).origin.isCached)
            #expect(harness.probe.count("/echo") == 4)
        }
    }

    @Test("a cache hit runs the response validator and the interceptors, and is delivered later on the main actor")
    func hitsLandLikeNetwork() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            let journal = Journal()
            let validations = TestBox(0)
            var api = cachedAPI()
            api.interceptors = [JournalInterceptor(tag: "api", journal: journal)]
            api.responseValidator = ResponseValidation { _ throws(ValidationFailure) in validations.mutate { $0 += 1 } }
            let manager = APIManager(api, engine: harness.engine)
            try await manager.load()
            journal.entries.removeAll()
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData()
            #expect(delegate.events.isEmpty, "a cache hit is delivered asynchronously too")
            await delegate.waitForEvents(1)
            guard case .success(let response?) = delegate.events[0], response.origin.isCached else {
                Issue.record("expected a cached success")
                return
            }
            #expect(validations.value == 2)
            #expect(journal.entries == ["api.shouldCall", "api.afterCall", "api.didReceiveResponse", "api.beforeSuccess", "api.afterSuccess"])
        }
    }

    @Test("clearing everything, one API, or one user's entries")
    func management() async throws {
        let cache = try makeCache()
        try await withHarness(cache: cache) { harness in
            var mine = cachedAPI(path: "/echo/mine")
            mine.name = "Mine"
            mine.cachePolicy.sensitiveComponent = "user-1"
            var theirs = cachedAPI(path: "/echo/theirs")
            theirs.name = "Theirs"
            let a = APIManager(mine, engine: harness.engine)
            let b = APIManager(theirs, engine: harness.engine)
            try await a.load()
            try await b.load()
            cache.removeEntries(sensitiveComponent: "user-1")
            #expect(try await a.load().origin == .network)
            #expect(try await b.load().origin.isCached)
            cache.removeEntries(forAPI: "Theirs")
            #expect(try await b.load().origin == .network)
            cache.removeAll()
            #expect(try await a.load().origin == .network)
            #expect(try await b.load().origin == .network)
            cache.purge()
            #expect(cache.memoryUsage.count == 0)
            #expect(try await a.load().origin == .cache(tier: .disk, age: .zero, isStale: false), "purge leaves the disk tier")
        }
    }

    @Test("stale if offline: with the server stopped, an expired entry is delivered marked stale")
    func staleIfOffline() async throws {
        let cache = try makeCache()
        let server = try await DemoServer.start()
        let engine = Engine(transport: URLSessionTransport(), cache: cache)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
        let offlineFriendly = APIManager(cachedAPI(.memoryAndDisk(staleIfOffline: true)), engine: engine)
        var strictAPI = cachedAPI(path: "/echo/strict")
        strictAPI.name = "Strict"
        let strict = APIManager(strictAPI, engine: engine)
        try await offlineFriendly.load()
        try await strict.load()
        await server.stop()
        advance(90_000)  // everything expired
        let stale = try await offlineFriendly.load()
        #expect(stale.origin == .cache(tier: .disk, age: .seconds(90_000), isStale: true))
        await #expect(throws: RunwayError.noNetwork(reason: .connectionRefused)) { try await strict.load() }
    }

    @Test("stale if offline with a network monitor: unreachable answers from the expired entry at once, without the server")
    func staleIfOfflineByMonitor() async throws {
        let cache = try makeCache()
        let server = try await DemoServer.start()
        let monitor = NetworkMonitor(path: .wired)
        let engine = Engine(transport: URLSessionTransport(), cache: cache, network: monitor)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
        let offlineFriendly = APIManager(cachedAPI(.memoryAndDisk(staleIfOffline: true)), engine: engine)
        try await offlineFriendly.load()
        advance(90_000)  // expired
        monitor.update(.unreachable)
        let stale = try await offlineFriendly.load()
        #expect(stale.origin == .cache(tier: .disk, age: .seconds(90_000), isStale: true))
        #expect(server.probe.count("/echo") == 1, "the server saw only the first load")
        await server.stop()
    }

    @Test("large bodies go to files, small ones inline; the disk tier is trimmed to 70 % of its limit, least recently used first")
    func diskLayoutAndTrimming() async throws {
        let cache = try makeCache(.init(diskSizeLimit: 100_000, inlineThreshold: 20 << 10))
        let disk = try #require(cache.disk)
        func entry(_ key: String, bytes: Int) -> CachedEntry {
            CachedEntry(
                key: key, status: 200, headers: [:], body: Data(repeating: 1, count: bytes), json: nil,
                storedAt: clock.value, expiresAt: clock.value.addingTimeInterval(3600), apiName: "T", sensitiveComponent: nil)
        }
        disk.store(entry("small", bytes: 100), now: clock.value)
        disk.store(entry("large", bytes: 30_000), now: clock.value)
        let blobs = root.url.appendingPathComponent("Library/Caches/runway/http-cache-blobs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs.path) == ["large"])
        #expect(disk.entry("large", now: clock.value)?.body.count == 30_000)
        #expect(disk.entry("small", now: clock.value)?.body.count == 100)

        for index in 0..<3 {  // 75,100 bytes in all: under the limit, nothing trimmed yet
            advance(1)
            disk.store(entry("e\(index)", bytes: 15_000), now: clock.value)
        }
        #expect(disk.size == 75_100)
        advance(1)
        _ = disk.entry("e0", now: clock.value)  // e0 becomes recently used
        for index in 3..<5 {  // 105,100 bytes: over the limit, a background trim starts
            advance(1)
            disk.store(entry("e\(index)", bytes: 15_000), now: clock.value)
        }
        await disk.waitForTrim()
        #expect(disk.size == 60_000, "trimmed to at most 70 % of the limit, no further")
        #expect(disk.entry("small", now: clock.value) == nil)
        #expect(disk.entry("large", now: clock.value) == nil, "the least recently used go first")
        #expect(disk.entry("e1", now: clock.value) == nil)
        for survivor in ["e0", "e2", "e3", "e4"] { #expect(disk.entry(survivor, now: clock.value) != nil, "\(survivor) survives") }
        #expect(!FileManager.default.fileExists(atPath: blobs.appendingPathComponent("large").path))
    }

    @Test("a corrupt database file is deleted and made again, with a log line")
    func corruptDatabase() throws {
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        try FileManager.default.createDirectory(at: database.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 0xAB, count: 4096).write(to: database)
        let cache = try makeCache()
        #expect(log.lines.contains { $0.message.contains("unreadable and is made again") })
        let disk = try #require(cache.disk)
        disk.store(
            CachedEntry(key: "k", status: 200, headers: [:], body: Data("x".utf8), json: nil, storedAt: clock.value,
                        expiresAt: clock.value.addingTimeInterval(60), apiName: "T", sensitiveComponent: nil),
            now: clock.value)
        #expect(disk.entry("k", now: clock.value)?.body == Data("x".utf8))
    }

    @Test("a truncated database is recovered too")
    func truncatedDatabase() throws {
        do {
            let cache = try makeCache()
            cache.disk?.store(
                CachedEntry(key: "k", status: 200, headers: [:], body: Data(count: 10), json: nil, storedAt: clock.value,
                            expiresAt: clock.value.addingTimeInterval(60), apiName: "T", sensitiveComponent: nil),
                now: clock.value)
        }
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        let data = try Data(contentsOf: database)
        try data.prefix(100).write(to: database)
        let cache = try makeCache()
        #expect(cache.disk != nil)
        #expect(cache.diskUsage == 0)
    }

    func entry(_ key: String, _ body: String) -> CachedEntry {
        CachedEntry(
            key: key, status: 200, headers: [:], body: Data(body.utf8), json: nil, storedAt: clock.value,
            expiresAt: clock.value.addingTimeInterval(60), apiName: "T", sensitiveComponent: nil)
    }

    @Test("a tampered row reads as values, never traps; a body file that is missing or outside the blobs folder is a miss, and nothing outside is deleted")
    func tamperedRowsRead() throws {
        do {
            let cache = try makeCache()
            cache.disk?.store(entry("kept", "x"), now: clock.value)
        }
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        try DatabaseQueue(path: database.path).writeWithoutTransaction { db in
            // SQLite keeps text in an INTEGER or DOUBLE column when it does not read as a number.
            try db.execute(sql: """
                INSERT INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url)
                VALUES ('typed', 200, X'00FF', 'text body', NULL, 1, 'yesterday', 'tomorrow', 0, 12, 3.5, X'C3')
                """)
            // A status no answer has would trap when the hit is landed: a miss.
            for (key, status) in [("words", "'two hundred'"), ("huge", "1000"), ("negative", "-1")] {
                try db.execute(sql: """
                    INSERT INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url)
                    VALUES ('\(key)', \(status), X'01', 'b', NULL, 1, 0, 0, 0, 'T', NULL, NULL)
                    """)
            }
            try db.execute(sql: """
                INSERT INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url)
                VALUES ('gone', 200, X'01', NULL, 'no-such-file', 1, 0, 0, 0, 'T', NULL, NULL)
                """)
            try db.execute(sql: """
                INSERT INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url)
                VALUES ('outside', 200, X'01', NULL, '../../outside.txt', 'big', 0, 0, 0, 'T', NULL, NULL)
                """)
        }
        // A file beside the container that the tampered row names.
        let outside = root.url.appendingPathComponent("Library/Caches/outside.txt")
        try Data("not the cache's".utf8).write(to: outside)
        let cache = try makeCache()
        let disk = try #require(cache.disk)
        let typed = try #require(disk.entry("typed", now: clock.value))
        #expect(typed.status == 200)
        #expect(typed.storedAt == Date(timeIntervalSince1970: 0))
        #expect(typed.body == Data("text body".utf8))
        #expect(typed.headers.isEmpty)
        #expect(typed.apiName == "12")
        #expect(typed.sensitiveComponent == "3.5")
        #expect(typed.url == "\u{FFFD}")
        for key in ["words", "huge", "negative"] { #expect(disk.entry(key, now: clock.value) == nil, "\(key)") }
        #expect(disk.entry("gone", now: clock.value) == nil)
        #expect(disk.entry("outside", now: clock.value) == nil, "never read through a name outside the blobs folder")
        #expect(disk.entry("kept", now: clock.value)?.body == Data("x".utf8))
        // Removing every entry (the tampered ones too) deletes nothing outside the folder.
        disk.removeAll()
        #expect(FileManager.default.fileExists(atPath: outside.path))
        #expect(disk.count == 0)
    }

    @Test("a database locked by another process is not deleted: opening fails and the entries survive")
    func lockedIsNotCorrupt() throws {
        do {
            let cache = try makeCache()
            cache.disk?.store(entry("kept", "x"), now: clock.value)
        }
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        // Another process sharing the container (an app extension) holds the database exclusively.
        let holder = try DatabaseQueue(path: database.path)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // A thread of its own: on Linux the global dispatch queue is the pool the tests run on.
        Thread {
            try? holder.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
                try db.execute(sql: "BEGIN EXCLUSIVE")
                try db.execute(sql: "UPDATE entry SET status = status")
                locked.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
            finished.signal()
        }.start()
        locked.wait()
        #expect(throws: (any Error).self) { try makeCache() }
        #expect(!log.lines.contains { $0.message.contains("made again") })
        release.signal()
        finished.wait()
        try holder.close()
        let reopened = try makeCache()
        #expect(reopened.disk?.entry("kept", now: clock.value)?.body == Data("x".utf8))
    }

    @Test("a database found damaged after opening is made again on the spot, not only logged")
    func corruptionFoundLater() throws {
        let cache = try makeCache()
        let disk = try #require(cache.disk)
        for index in 0..<200 { disk.store(entry("k\(index)", String(repeating: "v", count: 500)), now: clock.value) }
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        // Checkpoint the WAL into the main file, then scribble over every page after the first.
        _ = try DatabaseQueue(path: database.path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let handle = try FileHandle(forWritingTo: database)
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 64 * 4096))
        try handle.close()
        #expect(disk.entry("k1", now: clock.value) == nil)
        #expect(log.lines.contains { $0.message.contains("found damaged and is made again") })
        disk.store(entry("after", "y"), now: clock.value)
        #expect(disk.entry("after", now: clock.value)?.body == Data("y".utf8))
        #expect(cache.diskUsage == 1)
    }
}
