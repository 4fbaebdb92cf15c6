import Benchmark
import Foundation
import HTTPTypes
import Logging
@_spi(Benchmarks) import Runway
import RunwayStorage
import Synchronization

/// The cache tiers beside their limits, in the same run: for memory, `NSCache` and a plain LRU
/// (a dictionary and a linked list behind a `Mutex`, nothing else); for disk, one file per entry
/// written and read with Foundation. Every sample is 1,000 operations on 1,000 keys.
enum CacheBenchmarks {
    static let count = 1_000
    static let keys = (0..<count).map { index in
        RequestSignature.hex((0..<32).map { UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> ($0 % 4 * 8) &+ $0) })
    }

    static func entry(_ key: String, bytes: Int) -> CachedEntry {
        CachedEntry(
            key: key, status: 200, headers: [.contentType: "application/json", .eTag: "\"v1\""],
            body: Data(repeating: 7, count: bytes), json: nil, storedAt: Date(), expiresAt: Date().addingTimeInterval(3600),
            apiName: "Bench", sensitiveComponent: nil)
    }

    static func register() {
        let values = keys.map { entry($0, bytes: 512) }

        // Memory: store every key, then look every key up.
        Benchmark("Cache memory set 512 B: Runway MemoryCache") { benchmark in
            let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
            for _ in benchmark.scaledIterations.striding(by: count) {
                for value in values { cache.store(value) }
            }
        }
        Benchmark("Cache memory set 512 B: plain LRU behind a Mutex") { benchmark in
            let cache = PlainLRU(limit: count)
            for _ in benchmark.scaledIterations.striding(by: count) {
                for value in values { cache.set(value, for: value.key) }
            }
        }
        Benchmark("Cache memory set 512 B: NSCache") { benchmark in
            let cache = NSCache<NSString, Box>()
            cache.countLimit = count
            let pairs = values.map { ($0.key as NSString, Box($0)) }
            for _ in benchmark.scaledIterations.striding(by: count) {
                for (key, box) in pairs { cache.setObject(box, forKey: key) }
            }
        }
        Benchmark("Cache memory get 512 B: Runway MemoryCache") { benchmark in
            let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
            for value in values { cache.store(value) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for key in keys { blackHole(cache.entry(key)) }
            }
        }
        Benchmark("Cache memory get 512 B: plain LRU behind a Mutex") { benchmark in
            let cache = PlainLRU(limit: count)
            for value in values { cache.set(value, for: value.key) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for key in keys { blackHole(cache.value(for: key)) }
            }
        }
        Benchmark("Cache memory get 512 B: NSCache") { benchmark in
            let cache = NSCache<NSString, Box>()
            cache.countLimit = count
            let pairs = values.map { ($0.key as NSString, Box($0)) }
            for (key, box) in pairs { cache.setObject(box, forKey: key) }
            let nsKeys = pairs.map(\.0)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for key in nsKeys { blackHole(cache.object(forKey: key)) }
            }
        }

        // Disk: 100-byte bodies (inline in the index) against a file per entry.
        let small = keys.map { entry($0, bytes: 100) }
        let now = Date()
        Benchmark("Cache disk write 100 B: Runway DiskCache") { benchmark in
            let scratch = try Scratch()
            let disk = try scratch.diskCache()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for value in small { disk.store(value, now: now) }
            }
        }
        Benchmark("Cache disk write 100 B: a file per entry") { benchmark in
            let scratch = try Scratch()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for value in small { try value.bytes.write(to: scratch.file(value.key), options: .atomic) }
            }
        }
        Benchmark("Cache disk read 100 B: Runway DiskCache") { benchmark in
            let scratch = try Scratch()
            let disk = try scratch.diskCache()
            for value in small { disk.store(value, now: now) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for key in keys { blackHole(disk.entry(key, now: now)) }
            }
        }
        Benchmark("Cache disk read 100 B: a file per entry") { benchmark in
            let scratch = try Scratch()
            for value in small { try value.bytes.write(to: scratch.file(value.key), options: .atomic) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations.striding(by: count) {
                for key in keys { blackHole(try Data(contentsOf: scratch.file(key))) }
            }
        }
    }

    final class Box {
        let entry: CachedEntry
        init(_ entry: CachedEntry) { self.entry = entry }
    }

    /// A fresh folder, removed when the benchmark ends.
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-bench-\(UUID().uuidString)")

        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func file(_ key: String) -> URL { url.appendingPathComponent(key) }

        func diskCache() throws -> DiskCache {
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            return try DiskCache(
                container: Container(root: url.appendingPathComponent("container")),
                limits: .init(sizeLimit: 1 << 40, trimRatio: 0.7, inlineThreshold: 20 << 10), logger: logger)
        }
    }
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

extension Range where Bound == Int {
    /// Every `step`-th index: a sample of `scaledIterations` (1,000) as one pass over 1,000 keys.
    func striding(by step: Int) -> StrideTo<Int> { Swift.stride(from: lowerBound, to: upperBound, by: step) }
}
