import Foundation
import HTTPTypes
import Logging
@_spi(Benchmarks) import Runway
import RunwayStorage

// Compiled twice: here for `runway bench --suite cache`, and in the benchmark package through
// the link Benchmarks/Benchmarks/RunwayBenchmarks/CacheLines, so both measure the same lines.

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
