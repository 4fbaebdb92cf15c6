import Foundation
import Logging
@_spi(Benchmarks) import Runway
import RunwayStorage

/// The cache tiers against the plain alternatives — a dictionary-and-list LRU and `NSCache` for
/// memory, one file per entry for disk — and inline bodies against files at several sizes (where
/// the inline threshold belongs).
///
/// The lines are ``CacheWorkload/lines()``, the benchmark package's `Cache …` lines, timed here with
/// a plain clock: a sample is one pass over 1,000 keys, only the operations are timed (inputs are
/// built before, scratch folders deleted after), and each line prints the median of its samples
/// in µs per operation.
enum CacheBench {
    static func run(samples: Int) throws {
        print("Cache tiers: \(CacheWorkload.count) keys, median of \(samples) samples, µs per operation (only the operations timed)")
        for line in CacheWorkload.lines() {
            // One sample first, untimed, as the benchmark package warms up: the first pass of a
            // line pays for page faults and lazily built tables.
            try line.prepare()()
            var times: [Double] = []
            for _ in 0..<samples {
                let run = try line.prepare()
                times.append(perOperation(try timed(run), CacheWorkload.count))
            }
            times.sort()
            let name = line.name.padding(toLength: max(line.name.count, 66), withPad: " ", startingAt: 0)
            print("  \(name) " + String(format: "%9.2f µs", times[times.count / 2]))
        }
        if !PageCache.canDrop { print("  (the cold disk reads are left out: dropping the page cache needs root)") }
        try threshold()
    }

    /// Times `body` alone.
    static func timed(_ body: () throws -> Void) rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return clock.now - start
    }

    /// The same sizes stored inline in SQLite and as files, reads and writes timed apart: where
    /// the two cross is where the default inline threshold belongs.
    static func threshold() throws {
        print("\nWhere the inline threshold belongs: bodies inside SQLite vs as files beside it (µs per operation, median of 5)")
        print("  size      write inline   write file    read inline    read file")
        for bytes in [4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10] {
            let values = (0..<200).map { CacheWorkload.entry(String(format: "%064x", $0), bytes: bytes) }
            let now = Date()
            var figures: [Double] = []
            for inlineThreshold in [Int.max, 0] {
                var writes: [Double] = []
                var reads: [Double] = []
                for _ in 0..<5 {
                    let scratch = try CacheWorkload.Scratch()
                    let disk = try scratch.diskCache(inlineThreshold: inlineThreshold)
                    writes.append(perOperation(timed { for value in values { disk.store(value, now: now) } }, values.count))
                    reads.append(perOperation(timed { for value in values { _ = disk.entry(value.key, now: now) } }, values.count))
                }
                figures += [writes.sorted()[2], reads.sorted()[2]]
            }
            print(String(format: "  %4d KB  %12.1f %12.1f   %12.1f %12.1f", bytes >> 10, figures[0], figures[2], figures[1], figures[3]))
        }
    }

    static func perOperation(_ elapsed: Duration, _ count: Int) -> Double {
        (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(count)
    }
}
