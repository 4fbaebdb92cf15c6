import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Runway
import RunwayExamples
import RunwayNIO
import RunwayDemoServer
import RunwayServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `runway bench`: Runway against the raw transport under it, in one run, on loopback.
///
/// Build it in release (`swift run -c release runway bench`). Each line compares a Runway path
/// with the plain alternative a developer would write by hand, over the same server and body.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Runway against the raw transports and plain JSON parsing (use -c release)."
    )

    @Option(help: "Requests per HTTP scenario.")
    var requests = 5000

    @Option(help: "Concurrent requests in the concurrent scenarios.")
    var concurrency = 32

    @Option(help: "Items per listing page (16 items is about 2.4 KB of JSON).")
    var pageSize = 16

    @Option(help: "Repetitions of the 1,000-item parse.")
    var parses = 200

    @Option(help: "Rounds: every scenario runs once a round, in turn; the median round counts.")
    var rounds = 5

    @Option(help: "Which benchmarks: http, parse, cache, soak, oplog, nonce, hostile, collectors, revalidation or all (soak, oplog, nonce, hostile, collectors and revalidation run only when named; collectors needs --postgres).")
    var suite: Suite = .all

    @Option(help: "Loads per transport in the soak benchmark.")
    var soakLoads = 40_000

    @Option(help: "Events in the operation-log wire benchmark.")
    var oplogEvents = 1_000

    @Option(help: "A PostgreSQL server for the collector-ingest line, such as postgres://runway@127.0.0.1:5432/postgres.")
    var postgres: String?

    @Option(help: "Samples per cache line (each a pass over 1,000 keys, as in the benchmark package).")
    var cacheSamples = 8

    enum Suite: String, ExpressibleByArgument {
        case http, parse, cache, soak, oplog, nonce, hostile, collectors, revalidation, all
    }

    func run() async throws {
        var logger = Logger(label: "runway.bench")
        logger.logLevel = .warning
        if suite == .oplog {
            try await OplogBench.run(events: oplogEvents, postgres: postgres, logger: logger)
            return
        }
        if suite == .nonce {
            try await NonceBench.run(postgres: postgres, logger: logger)
            return
        }
        if suite == .collectors {
            guard let postgres else { throw ValidationError("--suite collectors needs --postgres postgres://user@host:port/db") }
            try await ScaleOutBench.run(postgres: postgres)
            return
        }
        if suite == .hostile {
            try await HostileBench.run()
            return
        }
        if suite == .revalidation {
            try await RevalidationBench.run(logger: logger)
            return
        }
        if suite == .soak {
            try await SoakBench.run(loads: soakLoads, concurrency: 64, logger: logger)
            return
        }
        try await withDemoServer { server, nio in
            if suite == .http || suite == .all { try await httpScenarios(server: server, nio: nio, logger: logger) }
            if suite == .parse || suite == .all { try parseScenarios() }
            if suite == .cache || suite == .all { try CacheBench.run(samples: cacheSamples) }
        }
    }

    private func httpScenarios(server: DemoServer, nio: AsyncHTTPClientTransport, logger: Logger) async throws {
        let url = "\(server.baseURL)/listings/esf?client=runway-demo&page=1&page_size=\(pageSize)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let session = URLSession(configuration: URLSessionTransport.sessionConfiguration())
        let nioEngine = Engine(transport: nio, logger: logger)
        try nioEngine.register(listingService(baseURL: server.baseURL))
        let sessionEngine = Engine(transport: URLSessionTransport(), logger: logger)
        try sessionEngine.register(listingService(baseURL: server.baseURL))
        let nioManager = await APIManager(SecondHandListAPI(), engine: nioEngine)
        let params: Parameters = ["page": 1, "page_size": .int(pageSize)]

        let probe = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10)).body.collect(upTo: 1 << 20)
        print("Body: \(probe.readableBytes) bytes of JSON (\(pageSize) listings); \(requests) requests a scenario in \(rounds) interleaved rounds (median).\n")
        print("scenario".padding(toLength: 52, withPad: " ", startingAt: 0) + "sequential req/s   \(concurrency) concurrent req/s")

        let rawAHC: @Sendable () async throws -> Void = {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            _ = try JSONSerialization.jsonObject(with: Data(body.readableBytesView))
        }
        let runwayEngineAHC: @Sendable () async throws -> Void = {
            _ = try await nioEngine.perform(SecondHandListAPI(), params: params).get()
        }
        let runwayManagerAHC: @Sendable () async throws -> Void = {
            _ = try await nioManager.load(with: params)
        }
        let rawSession: @Sendable () async throws -> Void = {
            guard let target = URL(string: url) else { return }
            let (data, _) = try await session.data(from: target)
            _ = try JSONSerialization.jsonObject(with: data)
        }
        let runwayEngineSession: @Sendable () async throws -> Void = {
            _ = try await sessionEngine.perform(SecondHandListAPI(), params: params).get()
        }

        let scenarios: [(String, @Sendable () async throws -> Void)] = [
            ("AsyncHTTPClient + JSONSerialization (raw)", rawAHC),
            ("Runway Engine over AsyncHTTPClient", runwayEngineAHC),
            ("Runway APIManager over AsyncHTTPClient", runwayManagerAHC),
            ("URLSession + JSONSerialization (raw)", rawSession),
            ("Runway Engine over URLSession", runwayEngineSession),
        ]
        for (_, operation) in scenarios {
            try await Self.rate(count: min(500, requests), concurrency: 1, operation)  // warm-up
        }
        // Interleaved rounds: the server shares the machine, so drift hits every scenario alike.
        var sequentialRounds = Array(repeating: [Double](), count: scenarios.count)
        var concurrentRounds = Array(repeating: [Double](), count: scenarios.count)
        let perRound = max(1, requests / rounds)
        for _ in 0..<rounds {
            for (index, (_, operation)) in scenarios.enumerated() {
                sequentialRounds[index].append(try await Self.rate(count: perRound, concurrency: 1, operation))
                concurrentRounds[index].append(try await Self.rate(count: perRound, concurrency: concurrency, operation))
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        var results: [(String, Double, Double)] = []
        for (index, (name, _)) in scenarios.enumerated() {
            let sequential = median(sequentialRounds[index])
            let concurrent = median(concurrentRounds[index])
            results.append((name, sequential, concurrent))
            print(
                name.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(format: "%10.0f", sequential) + String(format: "%22.0f", concurrent))
        }
        func ratio(_ runway: Int, _ raw: Int) -> String {
            String(
                format: "%+.1f %% / %+.1f %%", (results[runway].1 / results[raw].1 - 1) * 100,
                (results[runway].2 / results[raw].2 - 1) * 100)
        }
        print("\nRunway vs raw (sequential / concurrent):")
        print("  Engine over AsyncHTTPClient:     \(ratio(1, 0))")
        print("  APIManager over AsyncHTTPClient: \(ratio(2, 0))")
        print("  Engine over URLSession:          \(ratio(4, 3))\n")
        try await client.shutdown()
    }

    /// Requests per second of `operation`, `count` times over `concurrency` workers.
    @discardableResult
    static func rate(count: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws
        -> Double
    {
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            let share = count / concurrency
            for worker in 0..<concurrency {
                let runs = share + (worker < count % concurrency ? 1 : 0)
                group.addTask {
                    for _ in 0..<runs { try await operation() }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private func parseScenarios() throws {
        let items = (1...1000).map { index -> [String: Any] in
            ["esf_id": index, "esf_name": "Residence \(index)", "esf_title": "\(index % 3 + 1) bed", "esf_price": 2_000_000 + index]
        }
        let body = try JSONSerialization.data(withJSONObject: ["code": 0, "data": ["items": items]])
        struct Row: Decodable { let esf_id: Int; let esf_name: String; let esf_price: Int }
        struct Page: Decodable { struct Payload: Decodable { let items: [Row] }; let data: Payload }

        func time(_ label: String, _ body: () throws -> Int) rethrows {
            let clock = ContinuousClock()
            var best = Duration.seconds(1000)
            var checksum = 0
            for _ in 0..<parses {
                let start = clock.now
                checksum &+= try body()
                best = min(best, clock.now - start)
            }
            print(label.padding(toLength: 60, withPad: " ", startingAt: 0) + String(format: "%8.2f ms", best.milliseconds) + "  (\(checksum % 7))")
        }
        print("1,000-item list (\(body.count / 1024) KB), best of \(parses):")
        try time("Runway JSON(parsing:) + walk into rows") {
            let json = try JSON(parsing: body)
            return (json["data"]?["items"]?.arrayValue ?? []).reduce(0) { $0 &+ ($1["esf_price"]?.intValue ?? 0) }
        }
        try time("JSONSerialization + [String: Any] walk") {
            let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            let items = (object?["data"] as? [String: Any])?["items"] as? [[String: Any]] ?? []
            return items.reduce(0) { $0 &+ (($1["esf_price"] as? Int) ?? 0) }
        }
        try time("JSONDecoder into a reformer-local Decodable") {
            try JSONDecoder().decode(Page.self, from: body).data.items.reduce(0) { $0 &+ $1.esf_price }
        }
    }
}
