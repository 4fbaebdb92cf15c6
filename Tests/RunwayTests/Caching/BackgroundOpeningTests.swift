import Dispatch
import Foundation
import Logging
import Runway
import RunwayStorage
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

/// A cache whose disk tier opens in the background (`ResponseCache(openingInBackground:)`), with
/// its opening held at a gate the test opens: what a load sees before and after, over the demo
/// server.
@Suite("Response cache: a disk tier opened in the background", .timeLimit(.minutes(10)))
@MainActor
struct BackgroundOpeningTests {
    let root: CacheRoot
    let log = LogCapture()

    init() throws { root = try CacheRoot() }

    /// A cache over `container` whose disk tier opens only once `gate` is signalled.
    func heldCache(_ gate: DispatchSemaphore, container: Container? = nil) -> ResponseCache {
        let log = self.log
        return ResponseCache(
            openingInBackground: container ?? root.container, logger: Logger(label: "test") { _ in log },
            beforeOpening: { gate.wait() })
    }

    func cachedAPI() -> AdHocAPI {
        var api = AdHocAPI(path: "/echo/cached")
        api.cachePolicy = .memoryAndDisk()
        return api
    }

    @Test("a disk tier made for the first time: the first load goes to the network without waiting for it, and its answer reaches the disk once it is open")
    func madeNew() async throws {
        let gate = DispatchSemaphore(value: 0)
        let cache = heldCache(gate)
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(), engine: harness.engine)
            // The opening has not run (the gate is shut): a lookup that waited for it would
            // never come back.
            let first = try await manager.load(with: ["q": "1"])
            #expect(first.origin == .network)
            #expect(cache.disk?.count == 0)
            gate.signal()
            try await cache.waitForDiskTier()
            #expect(cache.disk?.count == 1, "the store queued behind the opening ran after it")
            cache.purge()
            let second = try await manager.load(with: ["q": "1"])
            guard case .cache(tier: .disk, _, isStale: false) = second.origin else {
                Issue.record("with memory purged the answer must come from the disk tier, came from \(second.origin)")
                return
            }
            #expect(harness.probe.count("/echo") == 1)
        }
    }

    @Test("a disk tier made for the first time makes its file only once work comes: none for a load kept in memory, the database once an answer is stored")
    func madeOnFirstWork() async throws {
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        let opened = Locked(false)
        let cache = ResponseCache(openingInBackground: root.container, beforeOpening: { opened.withLock { $0 = true } })
        try await withHarness(cache: cache) { harness in
            var inMemory = AdHocAPI(path: "/echo/memory")
            inMemory.cachePolicy = .memory(lifetime: .seconds(600))
            _ = try await APIManager(inMemory, engine: harness.engine).load()
            // Its opening not queued yet: nothing was asked of the disk queue.
            #expect(cache.disk?.opensAtFirstWork.withLock { $0 } == true)
            #expect(!opened.withLock { $0 })
            #expect(!FileManager.default.fileExists(atPath: database.path), "no file while nothing was stored")
            _ = try await APIManager(cachedAPI(), engine: harness.engine).load(with: ["q": "1"])
            await cache.waitForDiskWork()
            #expect(opened.withLock { $0 })
            #expect(FileManager.default.fileExists(atPath: database.path))
            #expect(cache.disk?.count == 1, "the first store, queued behind the making, reached the disk")
        }
    }

    @Test("a disk tier made for the first time and released without work makes no file and is freed")
    func releasedWithoutWork() async throws {
        let database = root.url.appendingPathComponent("Library/Caches/runway/http-cache.sqlite")
        weak var released: ResponseCache?
        weak var releasedTier: DiskCache?
        do {
            let cache = ResponseCache(openingInBackground: root.container)
            released = cache
            releasedTier = cache.disk
            #expect(cache.memoryUsage.count == 0)
        }
        #expect(released == nil && releasedTier == nil, "nothing queued holds the cache or its disk tier")
        #expect(!FileManager.default.fileExists(atPath: database.path))
    }

    @Test("a disk tier already on disk: the first load, looking while the tier opens, waits for the opening and is answered from disk, the server never asked again")
    func openedExisting() async throws {
        let earlier = try ResponseCache(container: root.container)
        try await withHarness(cache: earlier) { harness in
            _ = try await APIManager(cachedAPI(), engine: harness.engine).load(with: ["q": "1"])
            await earlier.waitForDiskWork()
            // The next launch, against the same server: a new cache over the same container.
            let gate = DispatchSemaphore(value: 0)
            let cache = heldCache(gate)
            let relaunched = Harness(server: harness.server, engine: Engine(transport: harness.engine.transport, cache: cache))
            try relaunched.registerServices()
            let manager = APIManager(cachedAPI(), engine: relaunched.engine)
            // The opening is let go only once the first lookup has chosen to read the disk while
            // the tier is still opening: a lookup that skipped the tier would never let it go.
            cache.diskReadHooks.withLock { $0.before = { gate.signal() } }
            let first = try await manager.load(with: ["q": "1"])
            cache.diskReadHooks.withLock { $0.before = nil }
            if first.origin == .network { gate.signal() }  // a failing run: the opening still ends
            // Only the opened tier holds the entry: a lookup that had not waited would have missed.
            guard case .cache(tier: .disk, _, isStale: false) = first.origin else {
                Issue.record("the first load must come from the disk tier, came from \(first.origin)")
                return
            }
            #expect(harness.probe.count("/echo") == 1, "only the earlier launch asked the server")
        }
    }

    @Test("a disk tier that cannot be opened: waitForDiskTier throws what the opening met, an error is logged, and loads go on with memory alone")
    func openingFails() async throws {
        // The container's root is a file: no folder can be made below it.
        let file = root.url.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: file)
        let gate = DispatchSemaphore(value: 0)
        gate.signal()  // not held (a semaphore must end at its initial value)
        let cache = heldCache(gate, container: Container(root: file))
        await #expect(throws: StorageError.self) { try await cache.waitForDiskTier() }
        #expect(log.lines.contains { $0.level == .error && $0.message.contains("could not be opened") })
        try await withHarness(cache: cache) { harness in
            let manager = APIManager(cachedAPI(), engine: harness.engine)
            let first = try await manager.load(with: ["q": "1"])
            let second = try await manager.load(with: ["q": "1"])
            #expect(first.origin == .network)
            guard case .cache(tier: .memory, _, isStale: false) = second.origin else {
                Issue.record("the second load must come from the memory tier, came from \(second.origin)")
                return
            }
            #expect(cache.diskUsage == 0)
            #expect(harness.probe.count("/echo") == 1)
        }
    }
}
