import ArgumentParser
import Crypto
import Foundation
import Hummingbird
import Metrics
import OTel
import PostgresNIO
import Prometheus
import Runway
import RunwayExamples
import RunwayDemoServer
import RunwayServer
import Tracing

/// `runway serve`: run the operation-log collector behind the signature verifier — and, with
/// `--demo`, the demo's routes beside it — until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the operation-log collector (with --demo, the demo server too) until SIGTERM or SIGINT, which drain it.",
        discussion: """
            Binds 127.0.0.1 on an ephemeral port unless --host and --port say otherwise. SIGTERM (or
            Ctrl-C) drains: no new connection is accepted, requests in flight finish, then the
            process exits 0. GET /health answers while the process runs; GET /ready while its
            database answers too. See the README's "Deploying the collector".
            """
    )

    @Option(help: "The address to listen on (0.0.0.0 or :: for every interface).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 lets the system choose one (printed at start).")
    var port = 0

    @Option(
        name: .customLong("trusted-proxy"),
        help: "An address or CIDR block of a proxy in front of the server (a TLS-terminating load balancer), whose Forwarded or X-Forwarded-Proto/-Host fields say the scheme and host clients used, so their signatures verify. Repeat for several. Anyone else's forwarding fields are ignored.")
    var trustedProxies: [String] = []

    @Option(help: "The most live nonces one device may hold (a request names its device in a signed X-Runway-Device field); default 1 % of the store's capacity.")
    var nonceQuotaPerDevice: Int?

    @Option(help: "The most live nonces one key id may hold; default no limit but the store's capacity (an app's key is shared by every install).")
    var nonceQuotaPerKey: Int?

    @Option(help: "The most operation-log batches inflated, parsed and stored at once; more are answered 503 busy with Retry-After. Default two per processor.")
    var maxParallelBatches: Int?

    @Option(help: "Seconds a drain (SIGTERM) waits for requests in flight before cancelling them.")
    var drainTimeout = 30

    @Flag(help: "Also serve the demo's routes: the listings, echo, auth, transfers and the fault routes that `runway demo --server` plays against. Never for a deployment: some misbehave on purpose.")
    var demo = false

    @Option(help: "With --demo: the SQLite file of the demo's orders and their idempotency keys (default: a new file in the temporary folder; with --postgres, PostgreSQL).")
    var ordersDatabase: String?

    @Option(help: "With --demo: seconds a running order holds its Idempotency-Key before a repeat may run it again (a process killed mid-request).")
    var idempotencyLease = 60

    @Option(help: "With --demo: answer every this many orders 3 s after applying them (the answer a client's timeout loses).")
    var slowOrders: Int?

    @Flag(help: "Do not log each request (for benchmarks).")
    var quiet = false

    @Option(help: "The collector's SQLite file (default: a new file in the temporary folder for each run).")
    var collectorDatabase: String?

    @Option(help: "Keep collected events, and the verifier's nonces, in PostgreSQL instead, such as postgres://runway@127.0.0.1:5432/runway: several serve processes on one database are one collector. TLS as libpq says it: ?sslmode=require (encrypted), verify-ca or verify-full (the server's certificate checked against ?sslrootcert=CA.pem, and with verify-full its name too); disable by default.")
    var postgres: String?

    /// The key clients sign with (the demo key's unless given; its secret is printed at start).
    @OptionGroup var signing: KeyOptions

    @Flag(help: "Let unsigned requests reach the listings and the collector (only /signed/… still verifies). For benchmarks of the routes alone; said loudly at start.")
    var noVerify = false

    @Option(help: "Export spans by OTLP/HTTP (JSON) to this collector, such as http://127.0.0.1:4318: each request continues its client's trace (W3C traceparent), with the verifier's check and the collector's insert under it.")
    var traceTo: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port takes 0 to 65535") }
        do { _ = try TrustedProxies(trustedProxies) } catch { throw ValidationError(error.description) }
        if let postgres { _ = try Self.postgresConfiguration(postgres) }
        if noVerify, !signing.isDemoKey {
            throw ValidationError("--no-verify takes no key: nothing would check it")
        }
        if let traceTo, !["http", "https"].contains(URLComponents(string: traceTo)?.scheme ?? "") {
            throw ValidationError("--trace-to takes an http(s) URL such as http://127.0.0.1:4318")
        }
    }

    func run() async throws {
        let tracing = try traceTo.map(Self.startTracing)
        let store: any OperationLogStore
        var database: PostgresCollectorDatabase?
        let storeDescription: String
        if let postgres {
            let connected = try await PostgresCollectorDatabase.connect(try Self.postgresConfiguration(postgres))
            database = connected
            store = PostgresOperationLogStore(database: connected)
            storeDescription = postgres
        } else {
            let path = collectorDatabase ?? Self.freshTemporaryFile("runway-collector")
            store = try SQLiteOperationLogStore(url: URL(fileURLWithPath: path))
            storeDescription = path
        }
        // The listings, the collector and `/signed/echo/…` admit only requests signed with the
        // key, as the command's help says; the demo signs with the demo key.
        let key = signing.key
        let id = signing.id
        // Collectors that share a database share its replay window too: a signed batch accepted
        // by one process is a replay at every other.
        let defaultQuota = NonceQuota.default(capacity: MemoryNonceStore.capacity(forRequestsPerSecond: 2_000))
        let quota = NonceQuota(
            perKey: nonceQuotaPerKey ?? defaultQuota.perKey, perDevice: nonceQuotaPerDevice ?? defaultQuota.perDevice)
        let nonces: any NonceStore =
            database.map { PostgresNonceStore(database: $0, quota: quota) } ?? MemoryNonceStore(quota: quota)
        var limits = OperationLogCollector.Limits()
        if let maxParallelBatches { limits.maximumConcurrentBatches = max(maxParallelBatches, 1) }
        // `/metrics`: the verifier's and the collector's counts, and Hummingbird's request
        // durations through the process's metrics system.
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = ServerMetrics.prometheusNames
        factory.valueHistogramBuckets[ServerMetrics.Label.batchEvents] = [1, 5, 10, 30, 100, 300, 1_000]
        MetricsSystem.bootstrap(factory)
        let metrics = ServerMetrics(factory: factory)
        let verifier = SignatureVerifier<ServerRequestContext>(keys: [id: [key]], nonces: nonces, metrics: metrics)
        var orders: OrderDesk?
        if demo {
            var limits = IdempotencyMiddleware<ServerRequestContext>.Limits()
            limits.lease = .seconds(max(idempotencyLease, 1))
            if let database {
                orders = OrderDesk(
                    ledger: try await PostgresOrderLedger.open(database), keys: PostgresIdempotencyStore(database: database),
                    limits: limits, slowEvery: slowOrders)
            } else {
                let path = ordersDatabase ?? Self.freshTemporaryFile("runway-orders")
                let url = URL(fileURLWithPath: path)
                orders = OrderDesk(
                    ledger: try SQLiteOrderLedger(url: url),
                    keys: try SQLiteIdempotencyStore(url: url.deletingPathExtension().appendingPathExtension("keys.sqlite")),
                    limits: limits, slowEvery: slowOrders)
            }
        }
        let server = try await DemoServer.start(
            signatureVerifier: verifier, verifiesEverything: !noVerify,
            collector: OperationLogCollector(store: store, limits: limits, metrics: metrics), demoRoutes: demo,
            address: host, port: port, logLevel: quiet ? .critical : .info, metrics: registry, tracing: tracing != nil,
            trustedProxies: try TrustedProxies(trustedProxies), shutdownSignals: [.sigterm, .sigint],
            drainTimeout: .seconds(max(drainTimeout, 0)), orders: orders)
        // Written unbuffered: a parent process reading the address through a pipe gets it now.
        var banner = "Runway \(demo ? "demo server" : "collector") at \(server.baseURL) — Ctrl-C to stop\n"
        banner += "Operation-log collector at \(server.baseURL)/oplog/batches, events in \(storeDescription)"
        banner += database == nil ? "\n" : ", nonces there too\n"
        if noVerify {
            let warning = "WARNING: --no-verify: \(demo ? "the listings and the collector" : "the collector's routes") accept unsigned requests from anyone who can reach \(server.baseURL)\n"
            StandardStream.error.write(warning)
            banner += warning
        } else {
            let hex = key.withUnsafeBytes { RequestSignature.hex($0) }
            banner += "Signatures verified on \(demo ? "the listings, the collector and /signed/…" : "the collector"): key id \(id), secret \(hex)"
            banner += signing.secret == nil ? " (the demo key: choose your own with --key-id and --secret)\n" : "\n"
        }
        if let traceTo { banner += "Spans exported by OTLP/HTTP to \(traceTo)\n" }
        if !trustedProxies.isEmpty { banner += "Forwarded scheme and host believed from \(trustedProxies.joined(separator: ", "))\n" }
        if !quiet, demo {
            banner += "Routes:\n" + DemoServer.routes.map { "  \($0)\n" }.joined()
            banner += "Try: swift run runway demo --server \(server.baseURL)\n"
        }
        StandardStream.output.write(banner)
        // Until SIGTERM or SIGINT has drained the server: requests in flight answered.
        await server.stopped()
        await database?.close()
        tracing?.cancel()
        StandardStream.output.write("Drained and stopped\n")
    }

    /// Bootstraps swift-otel's tracer, exporting by OTLP/HTTP with JSON to `endpoint`, and
    /// runs its exporter; spans leave in batches at most 200 ms old
    /// (`OTEL_BSP_SCHEDULE_DELAY` and the other `OTEL_` variables still override).
    static func startTracing(to endpoint: String) throws -> Task<Void, any Error> {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "runway-serve"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.exporter = .otlp
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        configuration.traces.otlpExporter.endpoint = base.hasSuffix("/v1/traces") ? base : base + "/v1/traces"
        configuration.traces.otlpExporter.protocol = .httpJSON
        configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(200)
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        let service = backend.service
        return Task { try await service.run() }
    }

    /// A SQLite file of its own for this run in the temporary folder. Named for the process and
    /// a random part: a process id alone comes round again (a later run, a container's process
    /// 1), and that run would open — and serve — what an earlier one collected.
    static func freshTemporaryFile(_ stem: String) -> String {
        let name = "\(stem)-\(getpid())-\(UUID().uuidString.prefix(8).lowercased()).sqlite"
        return FileManager.default.temporaryDirectory.appendingPathComponent(name).path
    }

    /// `--postgres`'s URL as a client configuration (``PostgresCollectorDatabase/configuration(url:)``).
    static func postgresConfiguration(_ url: String) throws -> PostgresClient.Configuration {
        do { return try PostgresCollectorDatabase.configuration(url: url) } catch { throw ValidationError(error.description) }
    }
}
