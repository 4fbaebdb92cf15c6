import Benchmark

/// The cache tiers beside their limits, in the same run: for memory, `NSCache` and a plain LRU
/// (a dictionary and a linked list behind a `Mutex`, nothing else); for disk, one file per entry
/// written and read with Foundation. The lines are ``CacheWorkload/lines()`` (the CLI's
/// `Bench/CacheLines` folder, compiled here through a link), which `runway bench --suite cache`
/// times with a plain clock: every sample is 1,000 operations on 1,000 keys, and only the
/// operations are timed — inputs are built before the measurement starts, scratch folders
/// deleted after it stops.
enum CacheBenchmarks {
    static func register() {
        let disk = Benchmark.Configuration(
            metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal], timeUnits: .microseconds,
            warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(20), maxIterations: 8)
        for line in CacheWorkload.lines() {
            // `.kilo`: a sample is the line's 1,000 operations, and figures are per operation.
            Benchmark("Cache \(line.name)", configuration: line.isDisk ? disk : Benchmark.defaultConfiguration) { benchmark in
                let run = try line.prepare()
                benchmark.startMeasurement()
                try run()
                benchmark.stopMeasurement()
            }
        }
    }
}
