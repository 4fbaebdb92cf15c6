import Benchmark
import Foundation
import Runway

/// Runway against the raw transports under it, in one run: the HTTP lines talk to a server in a
/// process of its own; the JSON lines parse a 1,000-item list in memory.
let benchmarks: @Sendable () -> Void = {
    if ProcessInfo.processInfo.environment[ListingServer.modeVariable] != nil {
        // This process is the benchmarks' server: serve until killed.
        let stopped = DispatchSemaphore(value: 0)
        Task {
            try? await ListingServer.serve()
            stopped.signal()
        }
        stopped.wait()
        exit(0)
    }

    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 200,
        maxDuration: .seconds(4),
        maxIterations: 20_000
    )
    Benchmark.setup = { try Fixture.shared.start() }
    Benchmark.teardown = { try await Fixture.shared.stop() }
    let fixture = Fixture.shared

    // Sequential: one load at a time.
    Benchmark("GET sequential: raw AsyncHTTPClient + JSONSerialization") { benchmark in
        for _ in benchmark.scaledIterations { try await fixture.rawAsyncHTTPClient() }
    }
    Benchmark("GET sequential: Runway Engine over AsyncHTTPClient") { benchmark in
        for _ in benchmark.scaledIterations { try await fixture.runwayEngine(fixture.nioEngine) }
    }
    Benchmark("GET sequential: Runway APIManager over AsyncHTTPClient, caller off the main actor") { benchmark in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        let manager = await APIManager(ListingsAPI(), engine: engine)
        for _ in benchmark.scaledIterations { try await fixture.runwayManager(manager) }
    }
    Benchmark("GET sequential: Runway APIManager over AsyncHTTPClient, caller on the main actor") { benchmark in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        try await MainActorLoop.run(benchmark, engine: engine, fixture: fixture)
    }
    Benchmark("GET sequential: raw URLSession + JSONSerialization") { benchmark in
        for _ in benchmark.scaledIterations { try await fixture.rawURLSession() }
    }
    Benchmark("GET sequential: Runway Engine over URLSession") { benchmark in
        for _ in benchmark.scaledIterations { try await fixture.runwayEngine(fixture.sessionEngine) }
    }

    // Concurrent: 32 loads per iteration, all at once.
    let concurrent = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal], timeUnits: .microseconds,
        warmupIterations: 20, maxDuration: .seconds(4), maxIterations: 2_000)
    Benchmark("GET ×32 concurrent: raw AsyncHTTPClient + JSONSerialization", configuration: concurrent) { benchmark in
        for _ in benchmark.scaledIterations { try await Fixture.together(32) { try await fixture.rawAsyncHTTPClient() } }
    }
    Benchmark("GET ×32 concurrent: Runway Engine over AsyncHTTPClient", configuration: concurrent) { benchmark in
        for _ in benchmark.scaledIterations {
            try await Fixture.together(32) { try await fixture.runwayEngine(fixture.nioEngine) }
        }
    }
    Benchmark("GET ×32 concurrent: Runway APIManager over AsyncHTTPClient", configuration: concurrent) { benchmark in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        let manager = await APIManager(ListingsAPI(), engine: engine)
        for _ in benchmark.scaledIterations {
            try await Fixture.together(32) { try await fixture.runwayManager(manager) }
        }
    }
    Benchmark("GET ×32 concurrent: raw URLSession + JSONSerialization", configuration: concurrent) { benchmark in
        for _ in benchmark.scaledIterations { try await Fixture.together(32) { try await fixture.rawURLSession() } }
    }
    Benchmark("GET ×32 concurrent: Runway Engine over URLSession", configuration: concurrent) { benchmark in
        for _ in benchmark.scaledIterations {
            try await Fixture.together(32) { try await fixture.runwayEngine(fixture.sessionEngine) }
        }
    }

    // Parsing: the same 1,000-item list three ways.
    let list = JSONFixture.list
    Benchmark("JSON parse 1,000 items: Runway JSON") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSON(parsing: list)) }
    }
    Benchmark("JSON parse 1,000 items: JSONSerialization") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONSerialization.jsonObject(with: list)) }
    }
    Benchmark("JSON parse 1,000 items: JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONDecoder().decode(JSONFixture.Page.self, from: list)) }
    }
}

/// A whole measured loop on the main actor, as an app's view controller calls a manager.
@MainActor
enum MainActorLoop {
    static func run(_ benchmark: Benchmark, engine: Engine, fixture: Fixture) async throws {
        let manager = APIManager(ListingsAPI(), engine: engine)
        for _ in benchmark.scaledIterations { try await fixture.runwayManager(manager) }
    }
}

/// A 1,000-item listing page, as bytes and as a `Decodable` shape.
enum JSONFixture {
    struct Page: Decodable {
        struct Item: Decodable {
            var id: Int
            var title: String
            var price: Double
            var tags: [String]
            var available: Bool
        }

        var items: [Item]
    }

    static let list: Data = {
        let items = (0..<1_000).map { index -> [String: Any] in
            [
                "id": index, "title": "Flat \(index) near the metro, \(index % 4 + 1) rooms", "price": 4_000.5 + Double(index),
                "tags": ["metro", "south", "new"], "available": index % 3 != 0,
            ]
        }
        return (try? JSONSerialization.data(withJSONObject: ["items": items])) ?? Data()
    }()
}
