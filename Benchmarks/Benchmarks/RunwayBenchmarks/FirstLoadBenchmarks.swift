import AsyncHTTPClient
import Benchmark
import Runway
import RunwayNIO

/// The first load of a client that has no connection yet: connect, TLS handshake, request,
/// body, parse. Each round makes a fresh raw client and a fresh Runway transport (untimed),
/// times one load through each in an order rotated every round, then shuts both down (untimed).
///
/// The second line connects to an address chosen for the host, as an ``EndpointSelector`` does
/// (Runway), or as AsyncHTTPClient's `dnsOverride` does (raw): TLS still checks the host name.
enum FirstLoadBenchmarks {
    /// A client made and ready: its one timed load, and its teardown.
    struct Prepared {
        let load: () async throws -> Void
        let teardown: () async throws -> Void
    }

    static let rounds = 40

    static func register(_ fixture: Fixture) {
        func line(_ title: String, raw: @escaping @Sendable (SecureClients) async throws -> Prepared,
                  runway: @escaping @Sendable (SecureClients) async throws -> Prepared) {
            let ratio = BenchmarkMetric.custom("\(title): Runway ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
            let rawTime = BenchmarkMetric.custom("\(title): raw AHC (µs)", polarity: .prefersSmaller, useScalingFactor: false)
            let runwayTime = BenchmarkMetric.custom("\(title): Runway (µs)", polarity: .prefersSmaller, useScalingFactor: false)
            let configuration = Benchmark.Configuration(
                metrics: [ratio, rawTime, runwayTime], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
            Benchmark("\(title), interleaved: Runway Engine ÷ raw AsyncHTTPClient", configuration: configuration) { benchmark in
                guard let secure = fixture.secure else { throw FixtureError.notStarted }
                let clock = ContinuousClock()
                var times: [Duration] = [.zero, .zero]
                for round in 0..<rounds {
                    for step in 0..<2 {
                        let which = (round + step) % 2
                        let prepared = try await which == 0 ? raw(secure) : runway(secure)
                        let start = clock.now
                        try await prepared.load()
                        times[which] += clock.now - start
                        try await prepared.teardown()
                    }
                }
                benchmark.measurement(ratio, InterleavedBenchmarks.percent(times[0], of: times[1]))
                benchmark.measurement(rawTime, Int((times[0] / rounds).microseconds))
                benchmark.measurement(runwayTime, Int((times[1] / rounds).microseconds))
            }
        }

        line("HTTPS cold first load") { secure in
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton, configuration: SecureClients.configuration(.http2, tls: secure.tls))
            return Prepared(
                load: { try await SecureClients.raw(client, url: secure.listingsURL) },
                teardown: { try await client.shutdown() })
        } runway: { secure in
            let transport = AsyncHTTPClientTransport(connections: SecureClients.connections(.http2, tls: secure.tls))
            let engine = Engine(transport: transport, logger: secure.logger)
            try engine.register(Service(id: .bench, baseURLs: [.release: "https://127.0.0.1:\(secure.port)"]))
            return Prepared(load: { try await fixture.runwayEngine(engine) }, teardown: { try await transport.shutdown() })
        }

        line("HTTPS first load through a chosen address") { secure in
            var configuration = SecureClients.configuration(.http2, tls: secure.tls)
            configuration.dnsOverride = ["localhost": "127.0.0.1"]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            return Prepared(
                load: { try await SecureClients.raw(client, url: "https://localhost:\(secure.port)/listings") },
                teardown: { try await client.shutdown() })
        } runway: { secure in
            let transport = AsyncHTTPClientTransport(connections: SecureClients.connections(.http2, tls: secure.tls))
            let engine = Engine(transport: transport, logger: secure.logger)
            var probing = EndpointSelector.Probing()
            probing.probesAutomatically = false
            let selector = EndpointSelector(host: "localhost", port: secure.port, candidates: ["127.0.0.1"], probing: probing)
            try engine.register(
                Service(
                    id: .bench, baseURLs: [.release: "https://localhost:\(secure.port)"],
                    connection: .init(endpoints: selector)))
            // The round that chooses the address runs before the clock starts, as at launch.
            _ = await selector.probe(using: transport)
            guard selector.address == "127.0.0.1" else { throw FixtureError.notStarted }
            return Prepared(load: { try await fixture.runwayEngine(engine) }, teardown: { try await transport.shutdown() })
        }
    }
}

extension Duration {
    /// The duration in whole microseconds.
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
