import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import Runway
import RunwayNIO
import RunwayDemoServer

extension ServiceID {
    static let bench: ServiceID = "bench"
}

/// `GET /listings` as a Runway API; not cached unless a line says so (the launch lines cache
/// it in memory and on disk, so that a warm launch's first load is a disk hit).
struct ListingsAPI: API {
    var service: ServiceID { .bench }
    var path: String { "/listings" }
    var method: HTTPRequest.Method { .get }
    var retryPolicy: RetryPolicy { .never }
    var cachePolicy: CachePolicy = .none
}

/// What the HTTP benchmarks share: the server process, the raw clients and Runway over each.
/// Made once in the global setup, taken apart in the teardown.
final class Fixture: @unchecked Sendable {
    static let shared = Fixture()
    /// Connections per host for raw AsyncHTTPClient and Runway alike: the same allowance.
    static let connections = 8

    private(set) var server: ListingServer.Child?
    private(set) var rawClient: HTTPClient?
    /// A raw client on one event loop with its share of the connections, as Runway's transport
    /// keeps one a loop: every load of it on the loop its connection lives on, as the transport
    /// places one host's loads one after another (the stricter sequential baseline).
    private(set) var rawLoopClient: HTTPClient?
    private(set) var shippedClient: HTTPClient?
    private(set) var transport: AsyncHTTPClientTransport?
    private(set) var nioEngine: Engine?
    private(set) var sessionEngine: Engine?
    private(set) var session: URLSession?
    private(set) var delegatedSession: URLSession?
    private(set) var sessionTransport: URLSessionTransport?
    private(set) var listingsURL = ""
    private(set) var baseURL = ""
    /// Numbers that make each load of an in-flight line a request of its own (`?n=…`), for
    /// Runway and the raw clients alike: identical loads in flight at once share one request in
    /// Runway (its coalescing), and a ratio would then count loads that were never sent.
    let numbers = LoadNumbers()
    /// The clients of the TLS lines.
    private(set) var secure: SecureClients?

    func start() throws {
        // Made here, for this run only: the server presents a leaf of it, the clients trust it.
        let authority = try TestCertificateAuthority(commonName: "Runway Benchmarks CA")
        let server = try ListingServer.Child(authority: authority)
        self.server = server
        try CPUPinning.apply(server: server.process.processIdentifier)
        listingsURL = server.baseURL + "/listings"
        baseURL = server.baseURL
        // The raw client is configured exactly as Runway's transport configures its own: the
        // same pool, timeouts, no redirects, no decompression, and AsyncHTTPClient's tracer off
        // (no tracer is bootstrapped here), so that a ratio is the layer's cost, not a setting's.
        let connections = AsyncHTTPClientTransport.Connections(maximumConnectionsPerHost: Self.connections)
        rawClient = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.clientConfiguration(connections))
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        var share = AsyncHTTPClientTransport.clientConfiguration(connections)
        share.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(Self.connections / max(loops.count, 1), 1)
        rawLoopClient = loops.first.map { HTTPClient(eventLoopGroup: $0, configuration: share) }
        // AsyncHTTPClient as shipped (its tracer on, a no-op span per request): what an app
        // that makes a client without thinking of tracing has.
        var shipped = HTTPClient.Configuration(redirectConfiguration: .disallow)
        shipped.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = Self.connections
        shippedClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: shipped)
        let transport = AsyncHTTPClientTransport(connections: connections)
        self.transport = transport
        let service = Service(id: .bench, baseURLs: [.release: server.baseURL])
        // Failures only, as a production app logs: the raw clients log nothing either.
        var logger = Logger(label: "runway.benchmarks")
        logger.logLevel = .notice
        let nioEngine = Engine(transport: transport, logger: logger)
        try nioEngine.register(service)
        self.nioEngine = nioEngine
        let sessionTransport = URLSessionTransport()
        self.sessionTransport = sessionTransport
        let sessionEngine = Engine(transport: sessionTransport, logger: logger)
        try sessionEngine.register(service)
        self.sessionEngine = sessionEngine
        try openRawConnection(loops: loops, authority: server.baseURL.replacingOccurrences(of: "http://", with: ""))
        secure = try SecureClients(authority: authority, port: server.tlsPort, logger: logger)
        // Set up as the transport sets up its own session: no cache, no cookies, no credentials.
        let sessionConfiguration = URLSessionTransport.sessionConfiguration()
        session = URLSession(configuration: sessionConfiguration)
        delegatedSession = URLSession(configuration: sessionConfiguration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    /// With `RUNWAY_BENCHMARK_RAW_LOOP` set, the raw client's first connection is opened now: on
    /// the event loop the `Engine` places this server's exchanges on (`same`, the transport's
    /// rule: the authority's hash), on the other (`other`), or wherever AsyncHTTPClient puts it
    /// (`any`) — for the experiments on the sequential lines' two groups (`Benchmarks/README.md`).
    /// Unset, the raw client connects at its first load, as an app's does.
    private func openRawConnection(loops: [any EventLoop], authority: String) throws {
        guard let placement = ProcessInfo.processInfo.environment["RUNWAY_BENCHMARK_RAW_LOOP"], let rawClient,
            !loops.isEmpty
        else { return }
        let request = try HTTPClient.Request(url: listingsURL)
        guard placement != "any" else {
            _ = try rawClient.execute(request: request).wait()
            return
        }
        let home = Int(UInt(bitPattern: authority.hashValue) % UInt(loops.count))
        let index = placement == "same" ? home : (home + 1) % loops.count
        _ = try rawClient.execute(request: request, eventLoop: .delegateAndChannel(on: loops[index])).wait()
    }

    func stop() async throws {
        try await rawClient?.shutdown()
        try await rawLoopClient?.shutdown()
        try await shippedClient?.shutdown()
        try await transport?.shutdown()
        try await secure?.shutdown()
        session?.finishTasksAndInvalidate()
        server?.stop()
    }

    // MARK: - One load each way, its body parsed and checked

    func rawAsyncHTTPClient(distinct: Bool = false) async throws {
        try Self.check(try await rawAsyncHTTPClientParsed(distinct: distinct).object)
    }

    /// The listing's URL, with a number of its own when the load must be `distinct`.
    func url(distinct: Bool) -> String { numbered(listingsURL, distinct: distinct) }

    /// `url` with a number of its own (`?n=…`) when the load must be `distinct`.
    func numbered(_ url: String, distinct: Bool) -> String {
        distinct ? url + "?n=\(numbers.next())" : url
    }

    /// The load's params for Runway: the same number, when the load must be `distinct`.
    func params(distinct: Bool) -> Parameters {
        distinct ? ["n": .int(numbers.next())] : [:]
    }

    /// One load through ``rawLoopClient``, parsed with `JSONSerialization` or, `runwayParser`,
    /// with Runway's parser.
    func rawLoopAsyncHTTPClient(runwayParser: Bool) async throws {
        guard let rawLoopClient else { throw FixtureError.notStarted }
        let response = try await rawLoopClient.execute(HTTPClientRequest(url: listingsURL), timeout: .seconds(20))
        let body = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        if runwayParser {
            try Self.check(try JSON(parsing: body))
        } else {
            try Self.check(try JSONSerialization.jsonObject(with: body))
        }
    }

    /// The same exchange over AsyncHTTPClient as shipped (its tracer on), parsed by Runway's
    /// parser: the line that shows what the tracer setting alone is worth.
    func shippedAsyncHTTPClientRunwayParser() async throws {
        guard let shippedClient else { throw FixtureError.notStarted }
        let response = try await shippedClient.execute(HTTPClientRequest(url: listingsURL), timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        try Self.check(try JSON(parsing: Data(body.readableBytesView)))
    }

    /// The parsed body, for a caller that takes it to another isolation (the main actor) as an
    /// app takes its model to its views.
    func rawAsyncHTTPClientParsed(distinct: Bool = false) async throws -> ParsedBody {
        guard let rawClient else { throw FixtureError.notStarted }
        let response = try await rawClient.execute(HTTPClientRequest(url: url(distinct: distinct)), timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        return ParsedBody(object: try JSONSerialization.jsonObject(with: Data(body.readableBytesView)))
    }

    /// The same exchange with the body parsed by Runway's own parser (`JSON`): the baseline that
    /// takes the parser out of a ratio, so that what is left is the layer's own cost.
    func rawAsyncHTTPClientRunwayParser(distinct: Bool = false) async throws {
        try Self.check(try await rawAsyncHTTPClientRunwayParsed(distinct: distinct))
    }

    /// The body parsed by Runway's parser, for a caller that takes it to the main actor.
    func rawAsyncHTTPClientRunwayParsed(distinct: Bool = false) async throws -> JSON {
        guard let rawClient else { throw FixtureError.notStarted }
        let response = try await rawClient.execute(HTTPClientRequest(url: url(distinct: distinct)), timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSON(parsing: Data(body.readableBytesView))
    }

    func rawURLSessionRunwayParser(distinct: Bool = false) async throws {
        guard let session, let url = URL(string: url(distinct: distinct)) else { throw FixtureError.notStarted }
        let (data, _) = try await session.data(from: url)
        try Self.check(try JSON(parsing: data))
    }

    func rawURLSession(delegated: Bool = false, distinct: Bool = false) async throws {
        guard let session = delegated ? delegatedSession : session, let url = URL(string: url(distinct: distinct)) else {
            throw FixtureError.notStarted
        }
        let (data, _) = try await session.data(from: url)
        try Self.check(JSONSerialization.jsonObject(with: data))
    }

    func sessionTransportAlone() async throws {
        guard let sessionTransport, let url = URL(string: listingsURL), let host = url.host, let port = url.port else {
            throw FixtureError.notStarted
        }
        let request = TransportRequest(
            head: HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: url.path),
            body: nil, timeout: .seconds(20), apiName: "Listings")
        let response = try await sessionTransport.send(request)
        try Self.check(JSONSerialization.jsonObject(with: response.body))
    }

    /// One load through `engine`, checked; its response, for a caller that reads its timings.
    @discardableResult
    func runwayEngine(_ engine: Engine?, distinct: Bool = false) async throws -> RawResponse {
        guard let engine else { throw FixtureError.notStarted }
        let response = try await engine.perform(ListingsAPI(), params: params(distinct: distinct)).get()
        guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
        return response
    }

    /// One load through `manager`, where the caller is: on the main actor from a main-actor
    /// line, in a background task from a background one.
    nonisolated(nonsending) func runwayManager(_ manager: APIManager<ListingsAPI>, distinct: Bool = false) async throws {
        let response = try await manager.load(with: params(distinct: distinct))
        guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
    }

    static func check(_ json: JSON) throws {
        guard json["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
    }

    static func check(_ object: Any) throws {
        guard let envelope = object as? [String: Any], envelope["code"] as? Int == 0 else {
            throw FixtureError.unexpectedBody
        }
    }

    /// `total` loads, `width` of them in flight at any time: each worker starts its next load
    /// as soon as its last one lands.
    static func inFlight(
        _ width: Int, total: Int, _ load: @escaping @Sendable () async throws -> Void
    ) async throws {
        let remaining = Counter(total)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                group.addTask { while remaining.take() { try await load() } }
            }
            try await group.waitForAll()
        }
    }
}

/// A number per load, from any thread.
final class LoadNumbers: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        last += 1
        return last
    }
}

/// Loads left to start, shared by the workers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var left: Int

    init(_ count: Int) { left = count }

    /// Takes one load; `false` when none are left.
    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard left > 0 else { return false }
        left -= 1
        return true
    }
}

enum FixtureError: Error {
    case notStarted
    case unexpectedBody
}

/// A session delegate that refuses redirects, as Runway's URLSession transport does.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// What `JSONSerialization` made of a body. It is not `Sendable` by type, but nothing mutates it
/// after parsing: handing it to the main actor is what an app does with its parsed model.
struct ParsedBody: @unchecked Sendable {
    let object: Any
}
