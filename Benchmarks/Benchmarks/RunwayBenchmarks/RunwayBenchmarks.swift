import Benchmark
import Foundation
import Runway

/// Runway against the raw transports under it, in one run: the HTTP lines (plain, TLS and HTTP/2:
/// ``SecureBenchmarks``, ``FirstLoadBenchmarks``) talk to a server in a process of its own; each
/// launch line starts processes of its own (``LaunchBenchmarks``); the cache lines stand beside
/// their limits (``CacheBenchmarks``); the JSON lines parse a 1,000-item list in memory. This
/// executable is also the server and the launching app, by its environment.
let benchmarks: @Sendable () -> Void = {
    if ProcessInfo.processInfo.environment[ListingServer.modeVariable] != nil {
        // This process is the benchmarks' server: serve until killed, or until the benchmarks'
        // process is gone (its end of our standard input closes), so that a benchmark that
        // crashed leaves no server holding the runner's pipes.
        Thread.detachNewThread {
            while !FileHandle.standardInput.availableBytes().isEmpty {}
            exit(0)
        }
        let stopped = DispatchSemaphore(value: 0)
        Task {
            try? await ListingServer.serve()
            stopped.signal()
        }
        stopped.wait()
        exit(0)
    }
    if let spec = ProcessInfo.processInfo.environment[ProfileRun.variable] {
        // This process is one client loading one way, for a profiler.
        Benchmark("Profile", configuration: .init(metrics: [], warmupIterations: 0, maxIterations: 1)) { _ in
            await ProfileRun.run(spec)
        }
        return
    }
    if let launch = ProcessInfo.processInfo.environment[LaunchChild.variable] {
        // This process is one launch of an app: launch, report, exit.
        Benchmark("Launch", configuration: .init(metrics: [], warmupIterations: 0, maxIterations: 1)) { _ in
            await LaunchChild.run(launch)
        }
        return
    }

    // Each measured sample is 1,000 loads (figures are per load), so that CPU time, which the
    // system counts in 10 ms ticks, is read over a span long enough to mean something. The
    // loads of every `GET` and `Overhead` line run on a full pool (`PlainLine`), as the
    // interleaved lines' do.
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(10),
        maxIterations: 12
    )
    Benchmark.setup = { try Fixture.shared.start() }
    Benchmark.teardown = { try await Fixture.shared.stop() }
    let fixture = Fixture.shared

    // Sequential: one load at a time.
    PlainLine.register("GET sequential: raw AsyncHTTPClient + JSONSerialization") { iterations in
        for _ in iterations { try await fixture.rawAsyncHTTPClient() }
    }
    PlainLine.register("GET sequential: raw AsyncHTTPClient + Runway's parser") { iterations in
        for _ in iterations { try await fixture.rawAsyncHTTPClientRunwayParser() }
    }
    PlainLine.register("GET sequential: Runway Engine over AsyncHTTPClient") { iterations in
        for _ in iterations { try await fixture.runwayEngine(fixture.nioEngine) }
    }
    PlainLine.register("GET sequential: Runway APIManager over AsyncHTTPClient, caller off the main actor") { iterations in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        let manager = await APIManager(ListingsAPI(), engine: engine)
        for _ in iterations { try await fixture.runwayManager(manager) }
    }
    PlainLine.register("GET sequential: Runway APIManager over AsyncHTTPClient, caller on the main actor") { iterations in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        try await MainActorLoop.run(iterations, engine: engine, fixture: fixture)
    }
    PlainLine.register("GET sequential: raw AsyncHTTPClient + JSONSerialization, caller on the main actor") { iterations in
        try await MainActorLoop.runRaw(iterations, fixture: fixture)
    }
    PlainLine.register("GET sequential: raw AsyncHTTPClient + Runway's parser, caller on the main actor") { iterations in
        try await MainActorLoop.runRaw(iterations, fixture: fixture, runwayParser: true)
    }
    PlainLine.register("GET sequential: raw URLSession + JSONSerialization") { iterations in
        for _ in iterations { try await fixture.rawURLSession() }
    }
    PlainLine.register("GET sequential: raw URLSession + Runway's parser") { iterations in
        for _ in iterations { try await fixture.rawURLSessionRunwayParser() }
    }
    PlainLine.register("GET sequential: Runway Engine over URLSession") { iterations in
        for _ in iterations { try await fixture.runwayEngine(fixture.sessionEngine) }
    }
    PlainLine.register("GET sequential: Runway URLSessionTransport alone + JSONSerialization") { iterations in
        for _ in iterations { try await fixture.sessionTransportAlone() }
    }
    PlainLine.register("GET sequential: raw URLSession with a delegate + JSONSerialization") { iterations in
        for _ in iterations { try await fixture.rawURLSession(delegated: true) }
    }

    // Concurrent: 32 loads in flight at all times, each a request of its own (`Fixture.numbers`).
    PlainLine.register("GET 32 in flight: raw AsyncHTTPClient + JSONSerialization") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) { try await fixture.rawAsyncHTTPClient(distinct: true) }
    }
    PlainLine.register("GET 32 in flight: raw AsyncHTTPClient + Runway's parser") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) {
            try await fixture.rawAsyncHTTPClientRunwayParser(distinct: true)
        }
    }
    PlainLine.register("GET 32 in flight: Runway Engine over AsyncHTTPClient") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) {
            try await fixture.runwayEngine(fixture.nioEngine, distinct: true)
        }
    }
    PlainLine.register("GET 32 in flight: Runway APIManager over AsyncHTTPClient") { iterations in
        guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
        let manager = await APIManager(ListingsAPI(), engine: engine)
        try await Fixture.inFlight(32, total: iterations.count) { try await fixture.runwayManager(manager, distinct: true) }
    }
    PlainLine.register("GET 32 in flight: raw URLSession + JSONSerialization") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) { try await fixture.rawURLSession(distinct: true) }
    }
    PlainLine.register("GET 32 in flight: raw URLSession + Runway's parser") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) { try await fixture.rawURLSessionRunwayParser(distinct: true) }
    }
    PlainLine.register("GET 32 in flight: Runway Engine over URLSession") { iterations in
        try await Fixture.inFlight(32, total: iterations.count) {
            try await fixture.runwayEngine(fixture.sessionEngine, distinct: true)
        }
    }

    InterleavedBenchmarks.register(fixture)
    SecureBenchmarks.register(fixture)
    FirstLoadBenchmarks.register(fixture)
    LaunchBenchmarks.register(fixture)
    SoakBenchmarks.register(fixture)
    CacheBenchmarks.register()
    OverheadBenchmarks.register()

    // Parsing: the same 1,000-item list three ways.
    let list = JSONFixture.list
    let parsing = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal], timeUnits: .microseconds,
        warmupIterations: 5, scalingFactor: .one, maxDuration: .seconds(4), maxIterations: 500)
    Benchmark("JSON parse 1,000 items: Runway JSON", configuration: parsing) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSON(parsing: list)) }
    }
    Benchmark("JSON parse 1,000 items: JSONSerialization", configuration: parsing) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONSerialization.jsonObject(with: list)) }
    }
    Benchmark("JSON parse 1,000 items: JSONDecoder", configuration: parsing) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONDecoder().decode(JSONFixture.Page.self, from: list)) }
    }
}

/// A whole measured loop on the main actor, as an app's view controller calls a manager.
@MainActor
enum MainActorLoop {
    static func run(_ iterations: Range<Int>, engine: Engine, fixture: Fixture) async throws {
        let manager = APIManager(ListingsAPI(), engine: engine)
        for _ in iterations { try await fixture.runwayManager(manager) }
    }

    /// What an app without Runway writes in a view controller: the request and the parsing off
    /// the main actor, the parsed result back on it (where it is read, then let go, as the
    /// manager's response is). The floor for any main-actor delivery.
    static func runRaw(_ iterations: Range<Int>, fixture: Fixture, runwayParser: Bool = false) async throws {
        for _ in iterations {
            if runwayParser { try await rawOnMainRunwayParser(fixture) } else { try await rawOnMain(fixture) }
        }
    }

    static func rawOnMain(_ fixture: Fixture, distinct: Bool = false) async throws {
        try Fixture.check(try await offMain(fixture, distinct: distinct).object)
    }

    /// The same, the body parsed by Runway's parser.
    static func rawOnMainRunwayParser(_ fixture: Fixture, distinct: Bool = false) async throws {
        try Fixture.check(try await offMainRunwayParser(fixture, distinct: distinct))
    }

    @concurrent
    nonisolated static func offMain(_ fixture: Fixture, distinct: Bool = false) async throws -> ParsedBody {
        try await fixture.rawAsyncHTTPClientParsed(distinct: distinct)
    }

    @concurrent
    nonisolated static func offMainRunwayParser(_ fixture: Fixture, distinct: Bool = false) async throws -> JSON {
        try await fixture.rawAsyncHTTPClientRunwayParsed(distinct: distinct)
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
