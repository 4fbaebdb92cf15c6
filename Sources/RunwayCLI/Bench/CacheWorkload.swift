import Foundation
import HTTPTypes
import Logging
@_spi(Benchmarks) import Runway
import RunwayStorage
import Synchronization

// One file, two builds: `runway bench --suite cache` compiles it here, and the benchmark package
// compiles the same file through a link (Benchmarks/Benchmarks/RunwayBenchmarks/CacheWorkload.swift),
// so the two measure the same keys, entries, limits and baselines.

/// The cache lines both harnesses run: `runway bench --suite cache` times them with a plain clock,
/// the benchmark package with `ordo-one/benchmark` — the same code, so the two can be checked
/// against each other.
///
/// Every line is 1,000 operations on 1,000 keys. ``CacheLine/prepare`` builds a sample's inputs
/// (keys, entries, `NSCache`'s boxes, files to read, a dropped page cache) and returns the timed
/// part; scratch folders go when that part is released, after the timing stops.
struct CacheLine: Sendable {
    /// The line's name, after "Cache ".
    let name: String
    /// Whether it touches the disk (the benchmark package gives those fewer, longer samples).
    let isDisk: Bool
    /// Builds one sample and returns the part to time.
    let prepare: @Sendable () throws -> () throws -> Void
}

/// The inputs every cache line shares: 1,000 keys, entries shaped like a JSON answer, the
/// access pattern of the mixed lines, scratch folders, and the default limits an app gets.
enum CacheWorkload {
    static let count = 1_000
    static let keys = (0..<count).map { index in
        RequestSignature.hex((0..<32).map { UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> ($0 % 4 * 8) &+ $0) })
    }
    /// Keys never stored: every lookup misses.
    static let absentKeys = keys.map { "0" + $0.dropFirst() + "-absent" }
    /// Four in five lookups go to a fifth of the keys, in an order fixed by a seeded generator.
    static let mixedSequence: [Int] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let draw = Int(state >> 33)
            return draw % 5 == 0 ? draw % count : draw % (count / 5)
        }
    }()
    /// The mixed lines' tiers hold half the keys, so misses evict.
    static let mixedLimit = count / 2

    static func entry(_ key: String, bytes: Int) -> CachedEntry {
        CachedEntry(
            key: key, status: 200, headers: [.contentType: "application/json", .eTag: "\"v1\""],
            body: Data(repeating: 7, count: bytes), json: nil, storedAt: Date(), expiresAt: Date().addingTimeInterval(3600),
            apiName: "Bench", sensitiveComponent: nil)
    }

    /// A file per entry written as the disk tier writes its body files: to a temporary name with
    /// `open`/`write`/`close`, then renamed over the entry's, with no `fsync`. Foundation's
    /// `Data.write` (the other baseline) syncs each file before closing it, `.atomic` or not.
    static func writeUnsynced(_ data: Data, to file: URL) throws {
        let temporary = file.deletingLastPathComponent().path + "/." + file.lastPathComponent + ".tmp"
        let descriptor = open(temporary, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == data.count, rename(temporary, file.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// A disk tier whose queued writes are waited for when the sample is let go (after the
    /// timing stops), and whose folder goes only after them.
    final class QueuedWrites {
        let scratch: Scratch
        let disk: DiskCache

        init(scratch: Scratch) throws {
            self.scratch = scratch
            disk = try scratch.diskCache()
        }

        deinit { disk.queue.sync {} }
    }

    /// What `NSCache` holds: it takes objects only.
    final class Box {
        let entry: CachedEntry
        init(_ entry: CachedEntry) { self.entry = entry }
    }

    /// A fresh folder, removed when released (after the timed part).
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-bench-\(UUID().uuidString)")

        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func file(_ key: String) -> URL { url.appendingPathComponent(key) }

        /// The disk tier with an app's default limits, or another inline threshold.
        func diskCache(inlineThreshold: Int = ResponseCache.Limits().inlineThreshold) throws -> DiskCache {
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            return try DiskCache(
                container: Container(root: url.appendingPathComponent("container")),
                limits: .init(sizeLimit: 1 << 40, trimRatio: ResponseCache.Limits().diskTrimRatio, inlineThreshold: inlineThreshold),
                logger: logger)
        }
    }
}

extension CacheWorkload {
    /// Every line, in the order both harnesses run them; the cold lines only where the page
    /// cache can be dropped (``PageCache/canDrop``).
    static func lines() -> [CacheLine] {
        memoryLines() + [100, 100 << 10].flatMap(diskLines)
    }

    static func memoryLines() -> [CacheLine] {
        let values = keys.map { entry($0, bytes: 512) }
        func line(_ name: String, _ prepare: @escaping @Sendable () throws -> () throws -> Void) -> CacheLine {
            CacheLine(name: "memory \(name)", isDisk: false, prepare: prepare)
        }
        var lines = [
            line("set 512 B: Runway MemoryCache") {
                let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
                return { for value in values { cache.store(value) } }
            },
            line("set 512 B: plain LRU behind a Mutex") {
                let cache = PlainLRU(limit: count)
                return { for value in values { cache.set(value, for: value.key) } }
            },
            line("set 512 B: NSCache") {
                let cache = NSCache<NSString, Box>()
                cache.countLimit = count
                let pairs = values.map { ($0.key as NSString, Box($0)) }
                return { for (key, box) in pairs { cache.setObject(box, forKey: key) } }
            },
        ]
        // Get: every key, present (hit) or never stored (miss); a hit line that misses throws.
        for (kind, lookups) in [("hit", keys), ("miss", absentKeys)] {
            let expected = kind == "hit" ? count : 0
            lines += [
                line("get \(kind) 512 B: Runway MemoryCache") {
                    let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
                    for value in values { cache.store(value) }
                    return { try expect(expected, lookups.count { cache.entry($0) != nil }) }
                },
                line("get \(kind) 512 B: plain LRU behind a Mutex") {
                    let cache = PlainLRU(limit: count)
                    for value in values { cache.set(value, for: value.key) }
                    return { try expect(expected, lookups.count { cache.value(for: $0) != nil }) }
                },
                line("get \(kind) 512 B: NSCache") {
                    let cache = NSCache<NSString, Box>()
                    cache.countLimit = count
                    for value in values { cache.setObject(Box(value), forKey: value.key as NSString) }
                    let nsKeys = lookups.map { $0 as NSString }
                    return { try expect(expected, nsKeys.count { cache.object(forKey: $0) != nil }) }
                },
            ]
        }
        // Mixed: look up, and on a miss store (evicting), in a skewed order over twice the keys
        // the tier holds.
        lines += [
            line("mixed 512 B, half the keys fit: Runway MemoryCache") {
                let cache = MemoryCache(countLimit: mixedLimit, costLimit: Int.max / 2)
                return { for index in mixedSequence where cache.entry(keys[index]) == nil { cache.store(values[index]) } }
            },
            line("mixed 512 B, half the keys fit: plain LRU behind a Mutex") {
                let cache = PlainLRU(limit: mixedLimit)
                return {
                    for index in mixedSequence where cache.value(for: keys[index]) == nil { cache.set(values[index], for: keys[index]) }
                }
            },
            line("mixed 512 B, half the keys fit: NSCache") {
                let cache = NSCache<NSString, Box>()
                cache.countLimit = mixedLimit
                let nsKeys = keys.map { $0 as NSString }
                let boxes = values.map(Box.init)
                return {
                    for index in mixedSequence where cache.object(forKey: nsKeys[index]) == nil {
                        cache.setObject(boxes[index], forKey: nsKeys[index])
                    }
                }
            },
        ]
        return lines
    }

    /// Writes, warm reads, misses and cold reads of `bytes`-sized bodies: Runway's `DiskCache`
    /// with the default limits against a file per entry.
    static func diskLines(bytes: Int) -> [CacheLine] {
        let size = bytes >= 1024 ? "\(bytes >> 10) KB" : "\(bytes) B"
        let values = keys.map { entry($0, bytes: bytes) }
        let now = Date()
        func line(_ name: String, _ prepare: @escaping @Sendable () throws -> () throws -> Void) -> CacheLine {
            CacheLine(name: "disk \(name)", isDisk: true, prepare: prepare)
        }
        var lines = [
            line("write \(size): Runway DiskCache") {
                let scratch = try Scratch()
                let disk = try scratch.diskCache()
                return { withExtendedLifetime(scratch) { for value in values { disk.store(value, now: now) } } }
            },
            // What a load waits for now: the write queued on the tier's queue, not the write.
            line("write \(size), queued (the caller's wait): Runway DiskCache") {
                let sample = try QueuedWrites(scratch: Scratch())
                return {
                    withExtendedLifetime(sample) {
                        let disk = sample.disk
                        for value in values { disk.queue.async { disk.store(value, now: now) } }
                    }
                }
            },
            line("write \(size): a file per entry") {
                let scratch = try Scratch()
                let files = keys.map(scratch.file)
                return { try withExtendedLifetime(scratch) { for (value, file) in zip(values, files) { try value.bytes.write(to: file, options: .atomic) } } }
            },
            line("write \(size): a file per entry, no fsync") {
                let scratch = try Scratch()
                let files = keys.map(scratch.file)
                return { try withExtendedLifetime(scratch) { for (value, file) in zip(values, files) { try writeUnsynced(value.bytes, to: file) } } }
            },
        ]
        for (kind, lookups) in [("read", keys), ("read miss", absentKeys)] {
            let expected = kind == "read" ? count * bytes : 0
            lines += [
                line("\(kind) \(size): Runway DiskCache") {
                    let scratch = try Scratch()
                    let disk = try scratch.diskCache()
                    for value in values { disk.store(value, now: now) }
                    return {
                        try withExtendedLifetime(scratch) {
                            try expect(expected, lookups.reduce(0) { $0 + (disk.entry($1, now: now)?.bytes.count ?? 0) })
                        }
                    }
                },
                line("\(kind) \(size): a file per entry") {
                    let scratch = try Scratch()
                    for value in values { try writeUnsynced(value.bytes, to: scratch.file(value.key)) }
                    let files = lookups.map(scratch.file)
                    return {
                        try withExtendedLifetime(scratch) {
                            try expect(expected, files.reduce(0) { $0 + ((try? Data(contentsOf: $1))?.count ?? 0) })
                        }
                    }
                },
            ]
        }
        // Cold: written, flushed, the kernel's page cache dropped and the database opened anew,
        // as after a reboot or after the system reclaimed a backgrounded app's file pages.
        guard PageCache.canDrop else { return lines }
        let expected = count * bytes
        lines += [
            line("read cold \(size): Runway DiskCache") {
                let scratch = try Scratch()
                do {
                    let disk = try scratch.diskCache()
                    for value in values { disk.store(value, now: now) }
                }
                try PageCache.drop()
                let disk = try scratch.diskCache()
                return {
                    try withExtendedLifetime(scratch) {
                        try expect(expected, keys.reduce(0) { $0 + (disk.entry($1, now: now)?.bytes.count ?? 0) })
                    }
                }
            },
            line("read cold \(size): a file per entry") {
                let scratch = try Scratch()
                for value in values { try writeUnsynced(value.bytes, to: scratch.file(value.key)) }
                let files = keys.map(scratch.file)
                try PageCache.drop()
                return {
                    try withExtendedLifetime(scratch) {
                        try expect(expected, files.reduce(0) { $0 + ((try? Data(contentsOf: $1))?.count ?? 0) })
                    }
                }
            },
        ]
        return lines
    }

    /// A line that found or read other than it should is not measuring what it says.
    static func expect(_ expected: Int, _ found: Int) throws {
        guard found == expected else { throw CacheLineError.unexpected(expected: expected, found: found) }
    }
}

enum CacheLineError: Error {
    case unexpected(expected: Int, found: Int)
}

/// The limit a memory tier is measured against: a dictionary from key to node, a doubly linked
/// list of nodes for recency, one `Mutex`, a count limit — and nothing else.
final class PlainLRU: Sendable {
    final class Node {
        let key: String
        var value: CachedEntry
        var newer: Node?
        unowned(unsafe) var older: Node?

        init(key: String, value: CachedEntry) {
            self.key = key
            self.value = value
        }
    }

    struct State {
        var nodes: [String: Node] = [:]
        var newest: Node?
        var oldest: Node?
    }

    let limit: Int
    let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    func value(for key: String) -> CachedEntry? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            Self.unlink(node, &state)
            Self.pushNewest(node, &state)
            return node.value
        }
    }

    func set(_ value: CachedEntry, for key: String) {
        state.withLock { state in
            if let node = state.nodes[key] {
                node.value = value
                Self.unlink(node, &state)
                Self.pushNewest(node, &state)
                return
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            Self.pushNewest(node, &state)
            if state.nodes.count > limit, let victim = state.oldest {
                Self.unlink(victim, &state)
                state.nodes[victim.key] = nil
            }
        }
    }

    private static func unlink(_ node: Node, _ state: inout State) {
        if let newer = node.newer { newer.older = node.older } else { state.newest = node.older }
        if let older = node.older { older.newer = node.newer } else { state.oldest = node.newer }
        node.newer = nil
        node.older = nil
    }

    private static func pushNewest(_ node: Node, _ state: inout State) {
        node.older = state.newest
        state.newest?.newer = node
        state.newest = node
        if state.oldest == nil { state.oldest = node }
    }
}

/// The kernel's page cache, dropped for cold reads: what a read meets after a reboot, or after the
/// system reclaimed a backgrounded app's file pages.
enum PageCache {
    static let control = "/proc/sys/vm/drop_caches"

    /// Whether this process may drop it (Linux, as root).
    static var canDrop: Bool { FileManager.default.isWritableFile(atPath: control) }

    /// Flushes dirty pages, then drops clean pages, dentries and inodes.
    static func drop() throws {
        sync()
        try Data("3\n".utf8).write(to: URL(fileURLWithPath: control))
    }
}
