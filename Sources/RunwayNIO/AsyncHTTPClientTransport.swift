public import AsyncHTTPClient
import Tracing
import Foundation
import HTTPTypes
public import NIOCore
import NIOConcurrencyHelpers
import NIOHTTP1
import NIOPosix
public import NIOSSL
import X509
public import Runway

/// The transport over AsyncHTTPClient: for Linux and servers, and for apps that want SwiftNIO's
/// connection pool.
///
/// It speaks HTTP/1.1 and HTTP/2 (negotiated by ALPN over TLS) and keeps connections pooled per
/// host; it hands bodies on as they came off the wire, and the engine undoes their content
/// coding. Cancelling the calling task, or the request's ``TransportRequest/cancellation``,
/// cancels the request, which closes its connection: the engine's deadline over the whole
/// exchange, head and body, and a load's cancellation end it that way: the API's timeout is the
/// only deadline (AsyncHTTPClient's own deadline — a second later, and stopping at the head — is
/// set only where no engine watches the exchange, and no read timeout unless
/// ``Connections/readTimeout`` asks for one). An exchange runs on its host's event loop,
/// through the transport's client of that loop, whose pooled connections all live there — on
/// a less busy loop while many run at once. It
/// never follows redirects: a 3xx comes back as a response, and the `Engine` decides about the
/// next hop. It lives in the `RunwayNIO` product so that an app using only `Runway` never links
/// SwiftNIO.
///
/// For example:
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let engine = Engine(transport: transport)
/// // …
/// try await transport.shutdown()
/// ```
public final class AsyncHTTPClientTransport: Transport {
    /// How the transport's connections are made and pooled: HTTP versions, TLS, timeouts,
    /// connections per host.
    public struct Connections: Sendable {
        /// The HTTP versions offered: `.automatic` negotiates HTTP/2 over TLS, `.http1Only` never does.
        public var httpVersion: HTTPClient.Configuration.HTTPVersion
        /// How long an unused pooled connection is kept.
        public var idleTimeout: TimeAmount
        /// Trust and identity settings for TLS; `nil` uses the system's trust roots.
        public var tlsConfiguration: TLSConfiguration?
        /// The longest silence allowed between two reads of a response, whatever the request's
        /// own timeout. Default `nil`, none: the API's timeout bounds the whole exchange, and a
        /// transport timer that fired first would end an API allowed 120 seconds after 30
        /// (AsyncHTTPClient's read timeout also bounds the wait for the head). Set one only for
        /// a client whose every API should give up on a silent peer sooner.
        public var readTimeout: TimeAmount?
        /// The longest a request waits for a connection — queued behind others for a pooled one,
        /// and connecting — before AsyncHTTPClient gives up. A request's own timeout ends the
        /// wait sooner, so by default (60 seconds, above any API's usual timeout) the API's
        /// timeout is what a caller meets; a wait that ends here is `RunwayError.timeout` too.
        /// (AsyncHTTPClient bounds the queue by its connect timeout: at 10 seconds, loads queued
        /// behind others on a busy machine failed long before their own deadline.)
        public var connectTimeout: TimeAmount
        /// HTTP/1.1 connections kept per host at most (AsyncHTTPClient's soft limit). Default 8, as
        /// AsyncHTTPClient recommends; raise it when many loads to one host run at once over
        /// HTTP/1.1 (32 concurrent loads at 8 connections queue behind each other). The
        /// transport's own clients, one per event loop (so that an answer is handed over on the
        /// loop that read it), share it between them: each loop keeps its share, and with fewer
        /// connections than loops, only that many loops are used. HTTP/2 multiplexes loads over
        /// one connection per loop in use, up to the server's stream limit.
        public var maximumConnectionsPerHost: Int
        /// The most clients kept for chosen addresses (one per host and address an
        /// `EndpointSelector` picks, as AsyncHTTPClient's `dnsOverride` is per client); past it
        /// the least recently used is shut down, its idle connections closed. Default 32.
        public var maximumAddressClients: Int = 32

        /// Where AsyncHTTPClient's own span of each request goes: under the request's span in
        /// the load's trace, injecting nothing (the engine puts the trace context on the request
        /// itself, before the signer, and only where it belongs). `nil` (the default): the tracer
        /// bootstrapped in `InstrumentationSystem` when the transport makes its clients, as
        /// AsyncHTTPClient itself does; with none bootstrapped, AsyncHTTPClient traces nothing.
        public var tracer: (any Tracer)?

        /// Creates the connection settings; AsyncHTTPClient's defaults where Runway has no reason to differ.
        public init(
            httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
            idleTimeout: TimeAmount = .seconds(60),
            tlsConfiguration: TLSConfiguration? = nil,
            readTimeout: TimeAmount? = nil,
            maximumConnectionsPerHost: Int = 8,
            connectTimeout: TimeAmount = .seconds(60)
        ) {
            self.httpVersion = httpVersion
            self.idleTimeout = idleTimeout
            self.tlsConfiguration = tlsConfiguration
            self.readTimeout = readTimeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectTimeout = connectTimeout
        }
    }

    /// The client every request without pins or a chosen address goes through.
    let shared: SharedClient
    /// Whether the transport made ``shared`` (and so shuts it down), or the app did.
    private let ownsShared: Bool
    let isShutDown = NIOLockedValueBox(false)
    /// Clients made on demand: one per pin set, whose every new connection checks the server's
    /// key, and one per host and chosen address (`EndpointSelector`; AsyncHTTPClient's
    /// `dnsOverride` is per client) — so a connection made without a check is never reused by a
    /// request that needs one.
    let madeClients = NIOLockedValueBox(MadeClients())
    let connections: Connections
    /// Whether AsyncHTTPClient makes a span of each request. It starts that span in the calling
    /// task's trace only through its `async` interface (its delegate interface starts it on the
    /// event loop, outside any trace), so such a transport sends every request through that one.
    let tracesRequests: Bool
    /// How many exchanges with each host run on each loop now; a host without any is dropped.
    /// Counted per host because each loop's client keeps its own share of a host's connections.
    private let exchangesOnLoop = NIOLockedValueBox<[String: [Int]]>([:])
    /// The requests of the addresses API calls ask again and again, each URL parsed once.
    let templates = RequestTemplates()

    /// Creates the transport with its own client; call ``shutdown()`` when done with it.
    ///
    /// The client (and, the first time in a process, AsyncHTTPClient's event loops) is made on
    /// another thread while the app goes on making its engine and first request; the first
    /// request waits for what is left of it.
    public convenience init(connections: Connections = Connections()) {
        let configuration = Self.clientConfiguration(connections)
        let perHost = connections.maximumConnectionsPerHost
        let shared = SharedClient { SharedClient.Made(perLoop: configuration, connections: perHost) }
        self.init(shared: shared, owned: true, connections: connections)
    }

    /// Creates the transport over `client`, an `HTTPClient` the app already has (one event loop
    /// group and one pool for the whole app).
    ///
    /// The transport sends with `client` as it is configured, so make it from
    /// ``clientConfiguration(_:)``, or at least with
    /// `redirectConfiguration: .disallow` — the engine follows redirects itself, checking every
    /// hop — and leave its `decompression` `.disabled` (AsyncHTTPClient's default): the engine
    /// undoes content codings itself, and a body the client already inflated fails as not in
    /// its coding. AsyncHTTPClient keeps a client's configuration private, so this cannot be checked up
    /// front; an answer that arrives through redirects the client followed fails with
    /// `RunwayError.invalidRequest(reason:)` instead of landing. Make it with
    /// `tracing.tracer = nil` too: a client that traces adds the current trace context to every
    /// request after the signer, beside the one the engine put there, and to every origin. The settings in `connections`
    /// apply to the clients the transport makes for pinned hosts (on `client`'s
    /// event loop group). The app keeps owning `client` and shuts it down; ``shutdown()`` shuts
    /// down only the clients the transport made.
    public convenience init(client: HTTPClient, connections: Connections = Connections()) {
        self.init(shared: SharedClient(client), owned: false, connections: connections)
    }

    /// The transport over `shared`; `owned` when the transport made it (and so shuts it down).
    init(shared: SharedClient, owned: Bool, connections: Connections) {
        self.shared = shared
        self.ownsShared = owned
        self.connections = connections
        // A client passed in is taken to trace when a tracer is bootstrapped (AsyncHTTPClient's
        // default); the transport's own clients trace when their configuration says so.
        let tracer = owned ? connections.tracer ?? InstrumentationSystem.tracer : InstrumentationSystem.tracer
        tracesRequests = !(tracer is NoOpTracer)
    }

    /// A transport released without ``shutdown()`` still closes its own clients, in the
    /// background, instead of leaking their connections (or trapping in debug builds).
    deinit {
        guard !isShutDown.withLockedValue({ $0 }) else { return }
        // A client still being made is shut down by its maker once made.
        if ownsShared, let made = shared.abandon() { made.shutDownInBackground() }
        for made in madeClients.withLockedValue(\.all) { made.shutdown { _ in } }
    }

    /// The configuration the transport makes its own clients with from `connections`: no
    /// redirects followed (the engine decides every hop), no decompression (the engine undoes
    /// content codings), failed connections not retried (the API's retry policy decides), and
    /// AsyncHTTPClient's tracer off unless a tracer is set or bootstrapped.
    ///
    /// Start from it to make the `HTTPClient` you pass to ``init(client:connections:)``, so that
    /// it is configured as the transport expects.
    public static func clientConfiguration(_ connections: Connections) -> HTTPClient.Configuration {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: connections.tlsConfiguration,
            // The engine owns redirects: it re-checks every hop against the service's rules.
            redirectConfiguration: .disallow,
            timeout: .init(connect: connections.connectTimeout, read: connections.readTimeout),
            // The engine undoes content codings, one way for every transport.
            decompression: .disabled
        )
        clientConfiguration.httpVersion = connections.httpVersion
        clientConfiguration.connectionPool.idleTimeout = connections.idleTimeout
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections.maximumConnectionsPerHost
        // Fail fast on refused connections; the engine's retry policy decides about retrying.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        // No tracer: AsyncHTTPClient skips its span (and the URL parsing for its attributes).
        let tracer = connections.tracer ?? InstrumentationSystem.tracer
        clientConfiguration.tracing.tracer = tracer is NoOpTracer ? nil : RequestSpanTracer(base: tracer)
        return clientConfiguration
    }

    /// Closes every pooled connection of the clients this transport made (all of them, even when
    /// one fails to shut down); the transport cannot send afterwards.
    ///
    /// - throws: The first error a client's shutdown reported, after all were shut down.
    public func shutdown() async throws {
        isShutDown.withLockedValue { $0 = true }
        var firstError: (any Error)?
        let own = ownsShared ? await shared.made().clients : []
        for owned in own + madeClients.withLockedValue(\.all) {
            do {
                try await owned.shutdown()
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    /// Requests go to `TransportRequest.connectAddress` when it is set.
    public var supportsConnectAddress: Bool { true }

    /// Yes: an exchange whose bodies are in memory (an API call) runs as an AsyncHTTPClient task
    /// that ``TransportRequest/cancellation`` cancels, with no Swift task of its own; one that
    /// streams a file either way, or that AsyncHTTPClient traces, runs in a task the handle
    /// cancels.
    public var honoursCancellation: Bool { true }

    /// The leaf certificate's key, on every new connection. AsyncHTTPClient hands a connection's
    /// checks the peer's leaf certificate only (its connection factory makes the TLS handler
    /// itself, with no verification callback), so a pin on any certificate of the chain cannot
    /// be checked here.
    public var pinScopes: Set<PublicKeyPins.Scope> { [.leaf] }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let scheme = request.head.scheme, let authority = request.head.authority else {
            throw RunwayError(.unsendableURL)
        }
        try request.refuseUncheckablePins(checking: pinScopes)
        // Bytes in memory both ways (every API call): AsyncHTTPClient hands each part of the
        // answer to the engine's collector on the connection's event loop, and one hop brings
        // the whole answer back. Files either way are read and written off the event loop, and
        // a traced request goes where AsyncHTTPClient's span joins the load's trace.
        let inMemory =
            request.sinkKeepsInMemory && !tracesRequests && request.uploadProgress == nil
            && (request.content.map { $0.data != nil } ?? true)
        do {
            if inMemory { return try await sendInMemory(request, scheme: scheme, authority: authority) }
            let url = Self.url(scheme: scheme, authority: authority, path: request.head.path ?? "/")
            guard let cancellation = request.cancellation else {
                return try await sendStreaming(request, url: url, authority: authority)
            }
            return try await cancellation.run { try await self.sendStreaming(request, url: url, authority: authority) }
        } catch {
            throw Self.classify(error)
        }
    }

    /// The client for `authority`: the shared one of loop `index`, or the one made for its
    /// chosen address or pins.
    private func lease(
        for request: TransportRequest, authority: String, shared: SharedClient.Made, on index: Int
    ) throws -> ClientLease {
        // The host matters only to a chosen address; pins name their host themselves.
        let host = request.connectAddress == nil ? "" : AuthorityHost.of(authority)
        return try lease(for: host, connectingTo: request.connectAddress, pins: request.pins, shared: shared, on: index)
    }

    /// The event loop for an exchange with `authority`, and so the shared client it goes
    /// through (the transport's own clients keep their connections on their loop; an app's
    /// client prefers it); ``finish(on:with:)`` when the exchange ends. It is the host's own
    /// loop unless another runs fewer of the host's exchanges now: one after another, a host's
    /// exchanges and its pooled connection share a thread (asked for no loop in particular from
    /// a task, AsyncHTTPClient takes the group's loops in turn, and an answer read on one loop
    /// was handed to an exchange on another); many at once, they spread over every loop, as do
    /// their connections — whatever other hosts keep busy, so that a host's loads use every
    /// loop's share of its connections.
    ///
    /// - returns: The loop, and its index for ``finish(on:with:)``; `nil` for a group with no loops.
    func startExchange(with authority: String, on loops: [any EventLoop]) -> (loop: any EventLoop, index: Int)? {
        guard !loops.isEmpty else { return nil }
        let home = Int(UInt(bitPattern: authority.hashValue) % UInt(loops.count))
        let index = exchangesOnLoop.withLockedValue { hosts in
            let known = hosts[authority].flatMap { $0.count == loops.count ? $0 : nil }
            var counts = known ?? Array(repeating: 0, count: loops.count)
            var least = home
            for index in counts.indices where counts[index] < counts[least] { least = index }
            counts[least] += 1
            hosts[authority] = counts
            return least
        }
        return (loops[index], index)
    }

    /// An exchange with `authority` that ``startExchange(with:on:)`` placed on loop `index` ended.
    func finish(on index: Int, with authority: String) {
        exchangesOnLoop.withLockedValue { hosts in
            guard var counts = hosts[authority], counts.indices.contains(index) else { return }
            counts[index] -= 1
            hosts[authority] = counts.allSatisfy { $0 <= 0 } ? nil : counts
        }
    }

    /// AsyncHTTPClient's deadline covers the head only: a backstop a second behind the engine's,
    /// so that the engine's deadline is the one that ends a silent exchange (as URLSession's
    /// idle timeout is the API's plus a second).
    private static func backstop(_ request: TransportRequest) -> NIODeadline {
        .now() + nanoseconds(request.timeout) + .seconds(1)
    }

    /// An exchange whose body, both ways, is bytes in memory: an AsyncHTTPClient task whose
    /// parts go to the request's sink as they arrive, ended by the request's cancellation handle.
    ///
    /// The task is made on the event loop that runs it — the host's, where its pooled
    /// connections live — in one trip there: made from a Swift task, AsyncHTTPClient went to
    /// the loop three times (to watch the task's end, to hand it to the connection, and for the
    /// caller to wait on its result), waking it each time.
    private func sendInMemory(_ request: TransportRequest, scheme: String, authority: String) async throws -> TransportResponse {
        var made = try templates.request(for: request.head, scheme: scheme, authority: authority)
        made.headers = Self.headers(of: request.head)
        made.body = request.content?.data.map { .byteBuffer(ByteBuffer(bytes: $0)) }
        let outbound = made
        let (target, gathering) = BodyGathering.destination(for: request, transportDecodes: false)
        let sharedClient = await shared.made()
        guard let placed = startExchange(with: authority, on: sharedClient.loops) else { throw TransportFault.internalFailure }
        defer { finish(on: placed.index, with: authority) }
        let lease = try self.lease(for: request, authority: authority, shared: sharedClient, on: placed.index)
        defer { release(lease) }
        let delegate = SinkDelegate(sink: target)
        let client = lease.client
        let loop = placed.loop
        // The engine ends the exchange at its deadline itself: no timer of AsyncHTTPClient's
        // beside it (arming and cancelling one took two more trips to the loop).
        let deadline = request.deadlineWatched ? nil : Self.backstop(request)
        let exchange = LoopExchange()
        // Ended by the handle, and — for a caller without an engine, or a transport of an app's
        // own that hands it none — by cancelling the calling task.
        let registration = request.cancellation?.register { exchange.cancel() }
        defer { if let registration { request.cancellation?.end(registration) } }
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: LoopExchange.Waiting) in
                exchange.wait(on: continuation)
                loop.execute {
                    exchange.start {
                        client.execute(
                            request: outbound, delegate: delegate, eventLoop: .delegate(on: loop), deadline: deadline,
                            logger: nil)
                    }
                }
            }
        } onCancel: {
            exchange.cancel()
        }
        return try gathering?.response(head: answer.head, httpVersion: answer.version)
            ?? TransportResponse(head: answer.head, body: Data(), httpVersion: answer.version)
    }

    /// An exchange that reads its body from files, reports upload progress, or writes its
    /// answer to a sink that may block (a download's file, an app's sink): through
    /// AsyncHTTPClient's `async` interface, never on an event loop. Files are read, and such a
    /// sink written (``SinkFeed``), on a ``BlockingLane`` of the exchange's own: AsyncHTTPClient
    /// pulls a body and hands out the answer in tasks, and a task waiting for a slow disk holds
    /// one of the few threads every task of the app runs on.
    private func sendStreaming(_ request: TransportRequest, url: String, authority: String) async throws -> TransportResponse {
        var outbound = HTTPClientRequest(url: url)
        outbound.method = HTTPMethod(rawValue: request.head.method.rawValue)
        outbound.headers = Self.headers(of: request.head)
        // The engine's collector and a gathering of the transport's own keep bytes in memory.
        let sinkMayBlock = request.responseSink != nil && !request.sinkKeepsInMemory
        let readsFiles = request.content.map { $0.data == nil } ?? false
        let lane = sinkMayBlock || readsFiles ? BlockingLane() : nil
        if let content = request.content {
            if let data = content.data, request.uploadProgress == nil {
                outbound.body = .bytes(ByteBuffer(bytes: data))
            } else {
                // Files are read a chunk at a time as the connection takes them.
                outbound.body = .stream(
                    BodyChunks(body: content, progress: request.uploadProgress, lane: lane), length: .known(content.length))
            }
        }
        let sharedClient = await shared.made()
        guard let placed = startExchange(with: authority, on: sharedClient.loops) else { throw TransportFault.internalFailure }
        defer { finish(on: placed.index, with: authority) }
        let lease = try self.lease(for: request, authority: authority, shared: sharedClient, on: placed.index)
        defer { release(lease) }
        let response = try await lease.client.execute(outbound, deadline: Self.backstop(request))
        // A client the app passed in may follow redirects by itself; its answer skipped the
        // engine's checks of each hop, so it is refused.
        guard response.history.count <= 1 else { throw TransportFault.followedRedirects }
        let version = Self.versionName(response.version)
        let head = Self.head(status: response.status, headers: response.headers)
        // Every chunk to the sink as it arrives (the engine's, which decodes and bounds the
        // body, or a download's file); without one, to a gathering kept here.
        let (target, gathering) = BodyGathering.destination(for: request, transportDecodes: false)
        if sinkMayBlock, let lane {
            let feed = SinkFeed(sink: target, lane: lane)
            do {
                try await feed.begin(head)
                for try await chunk in response.body { try await feed.write(chunk) }
                try await feed.finish()
            } catch {
                // The sink is the next attempt's once this one ends: nothing of this one after.
                await feed.settle()
                throw error
            }
        } else {
            try target.begin(head)
            for try await chunk in response.body {
                try chunk.withUnsafeReadableBytes { try target.write($0) }
            }
        }
        return try gathering?.response(head: head, httpVersion: version)
            ?? TransportResponse(head: head, body: Data(), httpVersion: version)
    }

    /// The URL AsyncHTTPClient is asked for: `scheme://authority/path`.
    static func url(scheme: String, authority: String, path: String) -> String {
        "\(scheme)://\(authority)\(path)"
    }

    /// `HTTP/2`, `HTTP/1.1`: how a response names its version.
    static func versionName(_ version: HTTPVersion) -> String {
        // The versions every answer comes in, without building their names each time.
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, _): "HTTP/2"
        case (1, 0): "HTTP/1.0"
        default: "HTTP/\(version.major)\(version.major >= 2 ? "" : ".\(version.minor)")"
        }
    }

    /// `duration` as a `TimeAmount`, clamped to what one can hold (an API may ask for a timeout
    /// of years; the engine's own deadline clamps the same way).
    static func nanoseconds(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(overflow || overflowAgain ? .max : sum)
    }

    /// `head`'s header fields as AsyncHTTPClient takes them, one line per value.
    static func headers(of head: HTTPRequest) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(head.headerFields.count)
        head.headerFields.forEachHeaderLine { headers.add(name: $0, value: $1) }
        return headers
    }

    static func head(status: HTTPResponseStatus, headers: HTTPHeaders) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for header in headers {
            guard let name = HTTPField.Name(header.name) else { continue }
            fields.append(HTTPField(name: name, value: header.value))
        }
        return HTTPResponse(status: .init(code: Int(status.code)), headerFields: fields)
    }

    /// `error` as the error an app meets: the fact AsyncHTTPClient's or SwiftNIO's error names,
    /// by the engine's table.
    static func classify(_ error: any Error) -> RunwayError {
        TransportFault.classify(error, naming: AsyncHTTPClientErrors.fault(of:))
    }
}
