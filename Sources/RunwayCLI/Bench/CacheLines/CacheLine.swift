import Foundation

// Compiled twice: here for `runway bench --suite cache`, and in the benchmark package through
// the link Benchmarks/Benchmarks/RunwayBenchmarks/CacheLines, so both measure the same lines.

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
