import Foundation
import Hummingbird
import HummingbirdHTTP2
public import Logging
import NIOCore
public import NIOSSL
public import Prometheus
public import RunwayServer
import ServiceLifecycle
public import UnixSignals

/// The server half of the demo and of Runway's tests: the listing APIs and the fault routes on
/// Hummingbird, beside `RunwayServer`'s verifier and collector, bound to 127.0.0.1 on an
/// ephemeral port. Not for a deployment: it answers routes that misbehave on purpose.
///
/// For example:
///
/// ```swift
/// let server = try await DemoServer.start()
/// defer { Task { await server.stop() } }
/// print(server.baseURL)  // http://127.0.0.1:54321
/// ```
public final class DemoServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// What the server saw.
    public let probe: ServerProbe
    private let running: Task<Void, any Error>
    private let group: ServiceGroup

    /// Whether the server speaks TLS (and so HTTP/2 by ALPN).
    public let usesTLS: Bool

    /// The loopback address the server listens on (127.0.0.1 unless asked otherwise).
    public let address: String

    /// `http://<address>:<port>`, or `https://…` with TLS.
    public var baseURL: String { "\(usesTLS ? "https" : "http")://\(address):\(port)" }

    private init(
        address: String, port: Int, usesTLS: Bool, probe: ServerProbe, running: Task<Void, any Error>, group: ServiceGroup
    ) {
        self.group = group
        self.address = address
        self.port = port
        self.usesTLS = usesTLS
        self.probe = probe
        self.running = running
    }

    /// Starts the server and returns once it accepts connections.
    ///
    /// - parameters:
    ///   - tls: A server TLS configuration (see ``TestCertificateAuthority``); with it the server
    ///     speaks HTTPS and offers HTTP/2 by ALPN. Without it, plain HTTP/1.1.
    ///   - signatureVerifier: When given, the listing APIs and `/signed/echo/…` admit only
    ///     requests it verifies.
    ///   - verifiesEverything: With `false`, the verifier guards `/signed/echo/…` only, and the
    ///     listing APIs and the collector stay open (`runway serve`: benchmarks and unsigned
    ///     clients reach them, and the demo's signing chapter still has a verifier to talk to).
    ///   - collector: When given, the operation-log collector's routes (`/oplog/…`), behind
    ///     `signatureVerifier` when that is given too.
    ///   - collectorFaults: When given, refusals in front of the collector (after the verifier):
    ///     a collector that fails on purpose.
    ///   - demoRoutes: Whether the demo's routes are mounted — the listings, `/echo/…` and
    ///     `/signed/echo/…`, `/faults/…`, `/auth/…`, the transfers and `/endpoints`. Without
    ///     them the server answers only the collector, `/metrics` and `/health`: what
    ///     `runway serve` runs unless asked for `--demo`.
    ///   - address: The address to listen on: 127.0.0.1 by default; any of 127.0.0.0/8 on Linux,
    ///     where tests stand up several hosts.
    ///   - port: The port; 0 (the default) lets the system choose.
    ///   - healthGate: When given, `GET /health` answers only once the test opens this gate
    ///     (``ServerProbe/openGate(_:)``): probes that end in an order the test chooses.
    ///   - endpointList: What `GET /endpoints` lists: a server list for endpoint selection.
    ///   - logLevel: The server's own log level; quiet by default.
    ///   - metrics: When given, `GET /metrics` answers its samples in Prometheus' text format,
    ///     and every request's duration is measured by Hummingbird's `MetricsMiddleware`
    ///     (through the factory bootstrapped in `MetricsSystem`: bootstrap a
    ///     `PrometheusMetricsFactory` over this registry, as `runway serve` does). Give the
    ///     verifier and the collector a `ServerMetrics` over it too.
    ///   - trustedProxies: Proxies in front of the server whose `Forwarded` or
    ///     `X-Forwarded-Proto`/`-Host` fields say the scheme and host a client used
    ///     (``ForwardedRequest``); none by default.
    ///   - shutdownSignals: Signals that drain the server and stop it (`runway serve`: SIGTERM
    ///     and SIGINT); none by default.
    ///   - drainTimeout: How long a drain waits for requests in flight before cancelling them.
    ///   - orders: The demo's order routes (`/orders`, behind ``IdempotencyMiddleware``), when given.
    ///   - tracing: Continue each client's trace (Hummingbird's `TracingMiddleware`, with the
    ///     tracer bootstrapped in `InstrumentationSystem`): a server span per request, the
    ///     verifier's check and the collector's insert under it.
    /// - throws: When the server cannot bind or the TLS configuration is refused.
    public static func start(
        tls: TLSConfiguration? = nil, signatureVerifier: SignatureVerifier<ServerRequestContext>? = nil,
        verifiesEverything: Bool = true, collector: OperationLogCollector? = nil, collectorFaults: CollectorFaults? = nil,
        demoRoutes: Bool = true, address: String = "127.0.0.1", port: Int = 0,
        healthGate: String? = nil, endpointList: [String] = [],
        logLevel: Logger.Level = .critical, metrics: PrometheusCollectorRegistry? = nil, tracing: Bool = false,
        trustedProxies: TrustedProxies = .none, shutdownSignals: [UnixSignal] = [], drainTimeout: Duration = .seconds(30),
        orders: OrderDesk? = nil
    ) async throws -> DemoServer {
        let probe = ServerProbe()
        let router = Router(context: ServerRequestContext.self)
        if trustedProxies != .none {
            // First: the verifier and every route see the scheme and host the client used.
            router.add(middleware: ForwardedRequest(trusting: trustedProxies))
        }
        if tracing {
            // A server span per request, continuing the client's trace from its `traceparent`,
            // through the tracer bootstrapped in `InstrumentationSystem`; no header is recorded,
            // and query values that may be credentials are redacted.
            router.add(
                middleware: TracingMiddleware(
                    redactingQueryParameters: ["token", "access_token", "refresh_token", "api_key", "key", "signature", "sig"]))
        }
        if let metrics {
            router.add(middleware: MetricsMiddleware())
            PrometheusEndpoint.add(to: router, registry: metrics)
        }
        if demoRoutes, let signatureVerifier {
            FaultRoutes.addEcho(to: router.group("/signed").add(middleware: signatureVerifier), probe: probe)
        }
        if demoRoutes, let signatureVerifier, verifiesEverything {
            ListingRoutes.add(to: router.group().add(middleware: signatureVerifier), catalog: ListingCatalog(), probe: probe)
        } else if demoRoutes {
            ListingRoutes.add(to: router, catalog: ListingCatalog(), probe: probe)
        }
        if let orders {
            var group = router.group("/orders")
            if verifiesEverything, let signatureVerifier { group = group.add(middleware: signatureVerifier) }
            OrderRoutes.add(to: group, desk: orders)
        }
        if let collector {
            var group = router.group("/oplog")
            if verifiesEverything, let signatureVerifier { group = group.add(middleware: signatureVerifier) }
            if let collectorFaults { group = group.add(middleware: collectorFaults) }
            collector.addRoutes(to: group)
            collector.addReadiness(to: router)
        }
        router.get("/health") { _, _ -> Response in
            probe.record("/health")
            if let healthGate { await probe.passGate(healthGate) }
            return JSONResponse.make(["status": "ok", "address": address])
        }
        if demoRoutes {
            router.get("/endpoints") { _, _ -> Response in
                probe.record("/endpoints")
                return JSONResponse.make(["addresses": endpointList])
            }
            FaultRoutes.add(to: router, probe: probe)
            EdgeRoutes.add(to: router, probe: probe)
            AuthRoutes.add(to: router, probe: probe)
            TransferRoutes.add(to: router, probe: probe)
            CachingRoutes.add(to: router, probe: probe)
        }
        var logger = Logger(label: "runway.server")
        logger.logLevel = logLevel

        let (ports, portSink) = AsyncStream<Int?>.makeStream()
        let app = Application(
            router: router,
            server: try tls.map { try .http2Upgrade(tlsConfiguration: $0) } ?? .http1(),
            configuration: .init(address: .hostname(address, port: port), serverName: "RunwayDemo"),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port)
                portSink.finish()
            },
            logger: logger
        )
        // A signal in `shutdownSignals` drains: no new connection is accepted, requests in
        // flight finish (for at most `drainTimeout`), then the server stops.
        var configuration = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: shutdownSignals, cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let group = ServiceGroup(configuration: configuration)
        let running = Task {
            defer { portSink.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() ?? nil else {
            running.cancel()
            _ = await running.result
            throw DemoServerError.couldNotBind
        }
        return DemoServer(address: address, port: port, usesTLS: tls != nil, probe: probe, running: running, group: group)
    }

    /// Returns when the server has stopped: after ``stop()``, or once a shutdown signal given
    /// to ``start(tls:signatureVerifier:verifiesEverything:collector:collectorFaults:demoRoutes:address:port:healthGate:endpointList:logLevel:metrics:tracing:trustedProxies:shutdownSignals:drainTimeout:)``
    /// has drained it.
    public func stopped() async {
        _ = await running.result
    }

    /// Stops the server and waits until it has closed its connections.
    ///
    /// A graceful shutdown: connections the kernel accepted but the server has not yet taken
    /// (a TCP probe's, a moment before) are served and closed. Cancelling the server instead
    /// traps in SwiftNIO on such a connection (apple/swift-nio#3481). A handler still waiting
    /// for something that will never come (a gate a test did not open) is cancelled after 10 s.
    public func stop() async {
        await group.triggerGracefulShutdown()
        let running = self.running
        let backstop = Task {
            try await Task.sleep(for: .seconds(10))
            running.cancel()
        }
        _ = await running.result
        backstop.cancel()
    }
}

extension DemoServer {
    /// Every route the server answers, one line each: what `runway serve` prints.
    public static let routes: [String] = [
        "GET  /listings/{esf|zf|xf}?page=&page_size=&city=   listing pages in a {code, data} envelope",
        "GET  /listings/{esf|zf|xf}/{id}                     one listing",
        "ANY  /echo/…                                        the request as the server saw it",
        "POST /orders  (Idempotency-Key, {queue, position}) one order, applied once; GET /orders lists them",
        "ANY  /signed/echo/…                                 the same, for signed requests only (reason on 401)",
        "GET  /health  ·  GET /ready                         alive; ready (the collector's database answers)",
        "GET  /endpoints                                     the server list for endpoint selection",
        "GET  /metrics                                       Prometheus text format (runway serve)",
        "POST /oplog/batches  ·  GET /oplog/stats?limit=&offset=   the operation-log collector",
        "POST /auth/token  ·  GET /auth/me  ·  POST /auth/orders   token refresh, a bearer-protected profile and order",
        "POST|PUT /upload/raw  ·  POST /upload/multipart     streamed uploads, answered with size and SHA-256",
        "GET  /files/blob?size=&version=                     downloads with ETag and Range",
        "GET  /faults/flaky?key=&failures=&retry_after=      503 a number of times, then 200",
        "GET  /faults/{hang|stall|drip|drop|gate/KEY}        servers that hang, stall, drip or drop",
        "GET  /faults/cacheable?key=                         a count per key, cacheable",
        "ANY  /faults/redirect?to=&status=                   redirects",
    ]
}

/// Why the demo server did not start.
public enum DemoServerError: Error, Sendable {
    /// It could not bind its address.
    case couldNotBind
}
