import Benchmark
import Foundation

/// Resident memory over many loads on URLSession, the transport of Apple platforms: each sample
/// is 4,000 loads kept 32 deep, and reports this process's resident memory after it and its
/// growth since the line's first sample. A flat line means nothing of a finished load is held;
/// the raw URLSession line beside it shows what the platform's URLSession keeps per load (on
/// Linux, swift-corelibs-foundation loses about 95 bytes a request), so Runway's own share is
/// the difference of the two slopes.
enum SoakBenchmarks {
    static let loadsPerSample = 4_000

    /// The resident memory of the line's first sample, against which the others grow.
    final class FirstSample: @unchecked Sendable {
        private let lock = NSLock()
        private var kilobytes: Int?

        /// The first value given, whichever call gives it.
        func baseline(_ value: Int) -> Int {
            lock.lock()
            defer { lock.unlock() }
            if let kilobytes { return kilobytes }
            kilobytes = value
            return value
        }
    }

    static func register(_ fixture: Fixture) {
        func line(_ title: String, _ load: @escaping @Sendable () async throws -> Void) {
            let resident = BenchmarkMetric.custom("\(title): resident after the sample (KB)", polarity: .prefersSmaller, useScalingFactor: false)
            let growth = BenchmarkMetric.custom(
                "\(title): resident growth since the first sample (‰)", polarity: .prefersSmaller, useScalingFactor: false)
            let configuration = Benchmark.Configuration(
                metrics: [resident, growth], warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(60),
                maxIterations: 12)
            let first = FirstSample()
            Benchmark("Soak, 32 in flight, \(loadsPerSample) loads a sample: \(title)", configuration: configuration) { benchmark in
                try await Fixture.inFlight(32, total: loadsPerSample, load)
                let now = ProcessMemory.residentKB()
                let baseline = first.baseline(now)
                benchmark.measurement(resident, now)
                benchmark.measurement(growth, (now - baseline) * 1_000 / max(baseline, 1))
            }
        }
        line("Runway Engine over URLSession") { try await fixture.runwayEngine(fixture.sessionEngine, distinct: true) }
        line("raw URLSession") { try await fixture.rawURLSession(distinct: true) }
    }

}
