import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
@_spi(Benchmarks) import Runway
import RunwayNIO

/// One way of loading, many times in a row, in a process of its own: what `perf record` and
/// `perf stat` attach to, so that a profile holds one client's work only. Set
/// `RUNWAY_BENCHMARK_PROFILE="WAY COUNT BASE_URL"` (the base URL of a server this executable
/// serves, `RUNWAY_BENCHMARK_SERVER=1`); it makes COUNT sequential loads of `/listings` and
/// prints the wall time and the CPU time (user + system) per load. `WAY@WIDTH` keeps WIDTH loads
/// in flight instead, each a request of its own (`?n=…`), as the in-flight lines do.
///
/// Ways: `raw` (AsyncHTTPClient's `async` interface, configured as Runway's transport, Runway's
/// parser), `rawperloop` (the same, over one client per event loop, each with its share of the
/// connections, taken in turn: the pool Runway's transport keeps, for the raw client), `rawloop`
/// (the same clients, every load through the first: one host's loads one after another as Runway's
/// transport places them, on one loop with its connection — the fastest raw client here for
/// sequential loads), `rawdelegate` (the same client through AsyncHTTPClient's delegate interface,
/// as Runway's transport sends an API call: ``CollectingDelegate``), `transport`
/// (``AsyncHTTPClientTransport`` alone, no engine: without the engine's collector it gathers the
/// body through AsyncHTTPClient's `async` interface, not the path an engine's API call takes),
/// `transportcall` (the transport alone on an API call's path: a ``GatheringSink``, a
/// cancellation handle, the request marked as the engine marks one),
/// `engine`, `manager` (an `APIManager` awaited from a background task), `session` (raw URLSession,
/// set up as the transport sets up its own session, Runway's parser), `sessionstream` (raw
/// URLSession taking the body chunk by chunk through its delegate: ``StreamingSession``),
/// `sessionengine` (the engine over ``URLSessionTransport``), `memory` (the engine over the
/// in-memory transport of the `Overhead` lines), `pairloop` (a `rawloop` load, then a `memory`
/// one: the engine's own work right after a real exchange), `memoryidle` and `idle` (a `memory`
/// load after 100 µs asleep, and the sleep alone), `parse` (the parser alone, on the same body),
/// `download`, `rawdownload`, `upload` and
/// `rawupload` (64 MiB from or to a file through the engine or raw AsyncHTTPClient:
/// ``TransferRun``), `mixed` (`raw` and `engine` loads in turn in one process, as the interleaved
/// lines run them, timed apart), and `sessionheld` and `sessionapart`, `sessionshared` and
/// `ahcheld` (loads beside a download into a slow sink: ``HeldSessionRun``). Sequential loads
/// may each be followed by a ``CacheSweep``. The `rawloop`, `pairloop`, `rawdelegate`,
/// `transportcall`, `engine`, `memory` and `parse` ways also print the mean time their parses took (``ParseClock``; the
/// raw load's for `pairloop`).
enum ProfileRun {
    static let variable = "RUNWAY_BENCHMARK_PROFILE"

    static func run(_ spec: String) async -> Never {
        let parts = spec.split(separator: " ").map(String.init)
        guard parts.count == 3, let count = Int(parts[1]), count > 0, let base = URL(string: parts[2]),
            let host = base.host, let port = base.port
        else {
            print("\(variable) wants \"WAY COUNT BASE_URL\", got \"\(spec)\"")
            exit(2)
        }
        // `WAY@WIDTH`: WIDTH loads in flight at once, each a request of its own.
        let wayAndWidth = parts[0].split(separator: "@").map(String.init)
        let way = wayAndWidth[0]
        guard let width = wayAndWidth.count == 2 ? Int(wayAndWidth[1]) : 1, width > 0 else {
            print("\(variable) wants WAY or WAY@WIDTH, got \(parts[0])")
            exit(2)
        }
        let connections = AsyncHTTPClientTransport.Connections(maximumConnectionsPerHost: 8)
        let raw = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.clientConfiguration(connections))
        let transport = AsyncHTTPClientTransport(connections: connections)
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        var share = AsyncHTTPClientTransport.clientConfiguration(connections)
        share.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8 / max(loops.count, 1), 1)
        let perLoop = loops.map { HTTPClient(eventLoopGroup: $0, configuration: share) }
        // Failures only, as the benchmark lines log.
        var logger = Logger(label: "runway.benchmarks")
        logger.logLevel = .notice
        let engine = Engine(transport: transport, logger: logger)
        let memory = Engine(transport: OverheadBenchmarks.MemoryTransport(), logger: logger, metrics: nil)
        let sessionEngine = Engine(transport: URLSessionTransport(), logger: logger)
        let sessionConfiguration = URLSessionTransport.sessionConfiguration()
        let session = URLSession(configuration: sessionConfiguration)
        let streaming = StreamingSession()
        do {
            try engine.register(Service(id: .bench, baseURLs: [.release: parts[2]]))
            try memory.register(Service(id: .bench, baseURLs: [.release: parts[2]]))
            try sessionEngine.register(Service(id: .bench, baseURLs: [.release: parts[2]]))
            let manager = await APIManager(ListingsAPI(), engine: engine)
            let url = parts[2] + "/listings"
            let clock = ContinuousClock()
            let start = clock.now
            let fixture = Fixture.shared
            let parses = ParseClock()
            /// One load the chosen way; `distinct` gives it a number of its own (`?n=…`), as the
            /// in-flight lines do, so that loads in flight at once never share one request.
            @Sendable func load(distinct: Bool) async throws {
                let numbered = fixture.numbered(url, distinct: distinct)
                switch way {
                case "raw":
                    let response = try await raw.execute(HTTPClientRequest(url: numbered), timeout: .seconds(20))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    try Fixture.check(try JSON(parsing: Data(body.readableBytesView)))
                case "rawperloop":
                    let client = perLoop[fixture.numbers.next() % perLoop.count]
                    let response = try await client.execute(HTTPClientRequest(url: numbered), timeout: .seconds(20))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    try Fixture.check(try JSON(parsing: Data(body.readableBytesView)))
                case "rawloop", "pairloop":
                    let response = try await perLoop[0].execute(HTTPClientRequest(url: numbered), timeout: .seconds(20))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    try Fixture.check(try parses.time { try JSON(parsing: Data(body.readableBytesView)) })
                    // The engine's own work run right after an exchange, as it runs over a transport.
                    if way == "pairloop" { try await fixture.runwayEngine(memory, distinct: distinct) }
                case "rawdelegate":
                    let loop: any EventLoop = loops[0]
                    let request = try HTTPClient.Request(url: numbered)
                    let deadline = NIODeadline.now() + TimeAmount.seconds(20)
                    let task: HTTPClient.Task<ByteBuffer> = perLoop[0].execute(
                        request: request, delegate: CollectingDelegate(), eventLoop: .delegate(on: loop),
                        deadline: deadline)
                    let body: ByteBuffer = try await task.futureResult.get()
                    try Fixture.check(try parses.time { try JSON(parsing: Data(body.readableBytesView)) })
                case "transport":
                    let path = String(numbered.dropFirst(parts[2].count))
                    let request = TransportRequest(
                        head: HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: path),
                        body: nil, timeout: .seconds(20), apiName: "Listings")
                    try Fixture.check(try JSON(parsing: try await transport.send(request).body))
                case "transportcall":
                    // An API call's path through the transport, as the engine sends it, without the
                    // engine: a sink of bytes in memory, a cancellation handle, the deadline watched.
                    let path = String(numbered.dropFirst(parts[2].count))
                    let sink = GatheringSink()
                    var request = TransportRequest(
                        head: HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: path),
                        content: nil, timeout: .seconds(20), apiName: "Listings", responseSink: sink)
                    request.cancellation = LoadCancellation()
                    request.markAsEngineAPICall()
                    _ = try await transport.send(request)
                    try Fixture.check(try parses.time { try JSON(parsing: sink.body) })
                case "engine":
                    parses.add(try await fixture.runwayEngine(engine, distinct: distinct).timings[.parse])
                case "manager":
                    try await fixture.runwayManager(manager, distinct: distinct)
                case "session":
                    guard let sessionURL = URL(string: numbered) else { throw FixtureError.notStarted }
                    let (data, _) = try await session.data(from: sessionURL)
                    try Fixture.check(try JSON(parsing: data))
                case "sessionstream":
                    guard let sessionURL = URL(string: numbered) else { throw FixtureError.notStarted }
                    try Fixture.check(try JSON(parsing: try await streaming.load(sessionURL)))
                case "sessionengine":
                    try await fixture.runwayEngine(sessionEngine, distinct: distinct)
                case "memory":
                    parses.add(try await fixture.runwayEngine(memory, distinct: distinct).timings[.parse])
                case "memoryidle", "idle":
                    // A tenth of a millisecond asleep first, as a load waits for its answer: the
                    // core idles, with no other code run.
                    usleep(100)
                    if way == "memoryidle" { try await fixture.runwayEngine(memory, distinct: distinct) }
                case "parse":
                    try Fixture.check(try parses.time { try JSON(parsing: ListingServer.body) })
                case "download":
                    try await TransferRun.download(engine)
                case "rawdownload":
                    try await TransferRun.rawDownload(raw, base: parts[2])
                case "upload":
                    try await TransferRun.upload(engine)
                case "rawupload":
                    try await TransferRun.rawUpload(raw, base: parts[2])
                default:
                    print(
                        "no way named \(way): raw, rawperloop, rawloop, rawdelegate, transport, transportcall, engine,"
                            + " manager, session,"
                            + " sessionstream, sessionengine, memory, pairloop, memoryidle, idle, parse, download, rawdownload,"
                            + " upload, rawupload,"
                            + " mixed, sessionheld, sessionapart, sessionshared or ahcheld")
                    exit(2)
                }
            }
            if ["sessionheld", "sessionapart", "sessionshared", "ahcheld"].contains(way) {
                try await HeldSessionRun.run(
                    sameTransport: way == "sessionheld", count: count, base: parts[2], host: host, port: port, logger: logger,
                    rawSession: way == "sessionshared", overAsyncHTTPClient: way == "ahcheld")
                exit(0)
            }
            if way == "mixed" {
                // Raw and engine loads in turn in one process, as the interleaved lines run them,
                // each kind timed apart: where the two clients' connections live decides the rest.
                var times: [Bool: Duration] = [false: .zero, true: .zero]
                for index in 0..<count {
                    let engineTurn = index.isMultiple(of: 2)
                    let began = clock.now
                    if engineTurn {
                        try await fixture.runwayEngine(engine)
                    } else {
                        let response = try await raw.execute(HTTPClientRequest(url: url), timeout: .seconds(20))
                        let body = try await response.body.collect(upTo: 1 << 20)
                        try Fixture.check(try JSON(parsing: Data(body.readableBytesView)))
                    }
                    times[engineTurn, default: .zero] += clock.now - began
                }
                let half = max(count / 2, 1)
                print("mixed: raw \((times[false] ?? .zero) / half), engine \((times[true] ?? .zero) / half) a load")
            } else if width == 1 {
                let sweep = CacheSweep.requested()
                for _ in 0..<count {
                    try await load(distinct: false)
                    sweep?.sweep()
                }
            } else {
                try await Fixture.inFlight(width, total: count) { try await load(distinct: true) }
            }
            let elapsed = clock.now - start
            var usage = rusage()
            getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
            let cpu =
                (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
            let parsing = parses.summary.map { ", parse \($0) µs a load" } ?? ""
            print(
                "\(parts[0]): \(count) loads, wall \(elapsed / count) a load, CPU \(cpu / count) µs a load (the whole process)"
                    + parsing)
            // The transfer ways' files, 64 MiB each.
            try? FileManager.default.removeItem(at: TransferRun.folder)
            try await raw.shutdown()
            for client in perLoop { try await client.shutdown() }
            try await transport.shutdown()
        } catch {
            print("\(way) failed: \(error)")
            exit(1)
        }
        exit(0)
    }
}
