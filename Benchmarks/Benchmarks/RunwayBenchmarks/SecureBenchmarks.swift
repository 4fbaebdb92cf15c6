import Benchmark

/// Runway against raw AsyncHTTPClient over TLS, HTTP/1.1 and HTTP/2, measured interleaved as
/// ``InterleavedBenchmarks`` measures plain HTTP: each sample alternates short runs of the
/// clients against the same server and reports ratios of their throughputs.
///
/// Two lines compare the protocols instead of the clients: the same loads over one HTTP/2
/// connection against 8 HTTP/1.1 connections, raw and through Runway — what HTTP/2 buys (or
/// costs) on this machine.
enum SecureBenchmarks {
    static func register(_ fixture: Fixture) {
        let configuration = Benchmark.Configuration(metrics: [], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)

        /// One client line: Runway ÷ raw over `version`, `width` loads in flight (1: sequential).
        func line(_ title: String, _ version: SecureClients.Version, width: Int) {
            let metrics = InterleavedBenchmarks.Metrics(title)
            var lineConfiguration = configuration
            lineConfiguration.metrics = [metrics.serialization, metrics.runwayParser]
            let name = "\(title), interleaved: Runway Engine ÷ raw AsyncHTTPClient"
            Benchmark(name, configuration: lineConfiguration) { benchmark in
                guard let secure = fixture.secure else { throw FixtureError.notStarted }
                let ratios: InterleavedBenchmarks.Ratios
                if width == 1 {
                    ratios = try await InterleavedBenchmarks.ratios(
                        raw: ({ try await secure.raw(version) }, { try await secure.rawRunwayParser(version) }),
                        runway: { try await secure.runway(version) })
                } else {
                    ratios = try await InterleavedBenchmarks.ratios(
                        rounds: 20, loadsPerRun: 1,
                        raw: (
                            InterleavedBenchmarks.inFlight(width: width) { try await secure.raw(version, distinct: true) },
                            InterleavedBenchmarks.inFlight(width: width) { try await secure.rawRunwayParser(version, distinct: true) }
                        ),
                        runway: InterleavedBenchmarks.inFlight(width: width) { try await secure.runway(version, distinct: true) })
                }
                benchmark.measurement(metrics.serialization, ratios.serialization)
                benchmark.measurement(metrics.runwayParser, ratios.runwayParser)
            }
        }
        line("HTTPS/1.1 sequential", .http1, width: 1)
        line("HTTPS/1.1 32 in flight", .http1, width: 32)
        line("HTTPS/1.1 100 in flight over 8 connections", .http1, width: 100)
        line("HTTP/2 sequential", .http2, width: 1)
        line("HTTP/2 32 in flight", .http2, width: 32)
        line("HTTP/2 100 in flight over one connection", .http2, width: 100)

        /// One protocol line: HTTP/2 ÷ HTTP/1.1, raw and through Runway, `width` loads in flight.
        func protocols(_ title: String, width: Int) {
            let raw = BenchmarkMetric.custom(
                "\(title): raw AHC over HTTP/2 ÷ over HTTP/1.1 throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
            let runway = BenchmarkMetric.custom(
                "\(title): Runway over HTTP/2 ÷ over HTTP/1.1 throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
            var lineConfiguration = configuration
            lineConfiguration.metrics = [raw, runway]
            Benchmark("\(title), interleaved: HTTP/2 ÷ HTTPS/1.1", configuration: lineConfiguration) { benchmark in
                guard let secure = fixture.secure else { throw FixtureError.notStarted }
                let loads: [@Sendable () async throws -> Void] = [
                    { try await secure.raw(.http1) }, { try await secure.raw(.http2) },
                    { try await secure.runway(.http1) }, { try await secure.runway(.http2) },
                ]
                // Each wrapped in a closure of the type the runs take: an array of `@Sendable`
                // closures cast to an array of plain ones traps at run time (Swift 6.3 on Linux).
                let times = try await InterleavedBenchmarks.onFullPool {
                    var runs: [() async throws -> Void] = []
                    for load in loads {
                        let run = width == 1 ? load : InterleavedBenchmarks.inFlight(width: width, load)
                        runs.append { try await run() }
                    }
                    return try await InterleavedBenchmarks.interleavedTimes(
                        rounds: width == 1 ? InterleavedBenchmarks.rounds : 20,
                        loadsPerRun: width == 1 ? InterleavedBenchmarks.loadsPerRun : 1, runs: runs)
                }
                benchmark.measurement(raw, InterleavedBenchmarks.percent(times[0], of: times[1]))
                benchmark.measurement(runway, InterleavedBenchmarks.percent(times[2], of: times[3]))
            }
        }
        protocols("Sequential", width: 1)
        protocols("100 in flight", width: 100)
    }
}
