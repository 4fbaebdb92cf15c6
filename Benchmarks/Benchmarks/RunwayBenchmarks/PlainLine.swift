import Benchmark

/// A line of loads measured as a whole, its body run at `.high` on a full pool: the runner holds
/// a thread of the default-priority pool while an `async` body runs (see
/// ``InterleavedBenchmarks/onFullPool(_:)``), and on two cores that left one thread for the
/// loads, raw and Runway alike. Main-actor lines still run their loop on the main actor; the
/// work they hand off goes to the full pool.
enum PlainLine {
    static func register(_ name: String, _ body: @escaping @Sendable (Range<Int>) async throws -> Void) {
        Benchmark(name) { benchmark in
            let iterations = benchmark.scaledIterations
            try await InterleavedBenchmarks.onFullPool { try await body(iterations) }
        }
    }
}
