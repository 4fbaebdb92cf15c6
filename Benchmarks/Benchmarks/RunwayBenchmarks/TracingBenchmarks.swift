import Benchmark
import InMemoryTracing
import Logging
import Runway
import RunwayNIO

/// What tracing costs, in one run: the engine with a tracer (an in-memory one that keeps every
/// span, so that each span is really made and ended) against the same engine setup without one,
/// and AsyncHTTPClient as shipped (its own tracer on, a no-op span per request) against the
/// same client with it off — the setting Runway's transport uses when no tracer is set.
enum TracingBenchmarks {
    static let engineRatio = BenchmarkMetric.custom(
        "Engine without a tracer ÷ with one throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let clientRatio = BenchmarkMetric.custom(
        "raw AHC, tracer off ÷ as shipped throughput (%)", polarity: .prefersLarger, useScalingFactor: false)

    static func register(_ fixture: Fixture) {
        let configuration = Benchmark.Configuration(
            metrics: [engineRatio], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
        Benchmark("GET sequential, interleaved: Runway Engine without a tracer ÷ with an in-memory tracer", configuration: configuration) { benchmark in
            guard let plain = fixture.nioEngine else { throw FixtureError.notStarted }
            let tracer = InMemoryTracer()
            var logger = Logger(label: "runway.benchmarks")
            logger.logLevel = .notice
            var connections = AsyncHTTPClientTransport.Connections(maximumConnectionsPerHost: Fixture.connections)
            connections.tracer = tracer
            let transport = AsyncHTTPClientTransport(connections: connections)
            let traced = Engine(transport: transport, logger: logger, tracer: tracer)
            try traced.register(Service(id: .bench, baseURLs: [.release: fixture.baseURL]))
            let times = try await InterleavedBenchmarks.onFullPool {
                try await InterleavedBenchmarks.interleavedTimes(
                    rounds: InterleavedBenchmarks.rounds, loadsPerRun: InterleavedBenchmarks.loadsPerRun,
                    runs: [
                        { try await fixture.runwayEngine(traced); tracer.clearAll() },
                        { try await fixture.runwayEngine(plain) },
                    ])
            }
            try await transport.shutdown()
            benchmark.measurement(engineRatio, InterleavedBenchmarks.percent(times[0], of: times[1]))
        }
        let clientConfiguration = Benchmark.Configuration(
            metrics: [clientRatio], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
        Benchmark("GET sequential, interleaved: raw AsyncHTTPClient with its tracer off ÷ as shipped, both parsing with Runway's parser", configuration: clientConfiguration) { benchmark in
            let times = try await InterleavedBenchmarks.onFullPool {
                try await InterleavedBenchmarks.interleavedTimes(
                    rounds: InterleavedBenchmarks.rounds, loadsPerRun: InterleavedBenchmarks.loadsPerRun,
                    runs: [
                        { try await fixture.shippedAsyncHTTPClientRunwayParser() },
                        { try await fixture.rawAsyncHTTPClientRunwayParser() },
                    ])
            }
            benchmark.measurement(clientRatio, InterleavedBenchmarks.percent(times[0], of: times[1]))
        }
    }
}
