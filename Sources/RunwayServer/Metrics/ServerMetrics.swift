public import CoreMetrics

/// What the server half reports through swift-metrics: `runway serve` exposes it at `/metrics`
/// in Prometheus' text format (``PrometheusEndpoint`` over the `PrometheusCollectorRegistry` of
/// the factory these metrics were made with).
///
/// | label | kind | dimensions |
/// |---|---|---|
/// | `runway_collector_batches_total` | counter | `outcome`: `accepted`, or the refusal's reason (`not_gzip`, `too_many_events`, …) |
/// | `runway_collector_events_total` | counter | `result` (`stored`, `duplicate`, `refused`), `reason` (a refused event's: `invalid`, `too_large`, …; empty otherwise) |
/// | `runway_collector_batch_events` | histogram | — (events per accepted batch, refused ones included) |
/// | `runway_verifier_refusals_total` | counter | `reason` (`bad_signature`, `replayed_nonce`, …) |
/// | `runway_nonce_store_entries` · `runway_nonce_store_capacity` | gauge | — (live nonces as this process last saw them: the memory store's, or the PostgreSQL table's at its last sweep plus this process's claims since) |
///
/// Every family exists from the start, each counter at zero for every value of its dimensions
/// (so `rate()` and `increase()` work from the first scrape). Every dimension is one of a fixed
/// set, so no input can grow the series without bound.
///
/// Request counts and durations come from Hummingbird's own `MetricsMiddleware`, which
/// `runway serve` installs; its names follow OpenTelemetry's dotted style, so give the
/// Prometheus factory ``prometheusNames(_:_:)`` as its `nameAndLabelSanitizer`: counters end in
/// `_total` (`hb_requests_total`, `hb_request_errors_total`) and the duration histogram in its
/// unit (`http_server_request_duration_seconds`), as Prometheus' naming rules and
/// `promtool check metrics` ask.
public struct ServerMetrics: Sendable {
    /// Metric labels.
    public enum Label {
        public static let batches = "runway_collector_batches_total"
        public static let events = "runway_collector_events_total"
        public static let batchEvents = "runway_collector_batch_events"
        public static let refusals = "runway_verifier_refusals_total"
        public static let nonceEntries = "runway_nonce_store_entries"
        public static let nonceCapacity = "runway_nonce_store_capacity"
    }

    private let factory: any MetricsFactory

    /// Reports through `factory` (the one bootstrapped in `MetricsSystem` by default), every
    /// family made at once, counters at zero.
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        for outcome in ["accepted"] + OperationLogCollector.Reason.allCases.map(\.rawValue) {
            Counter(label: Label.batches, dimensions: [("outcome", outcome)], factory: factory).increment(by: 0)
        }
        for result in ["stored", "duplicate"] {
            Counter(label: Label.events, dimensions: [("result", result), ("reason", "")], factory: factory).increment(by: 0)
        }
        for reason in OperationLogCollector.eventRefusalReasons {
            Counter(label: Label.events, dimensions: [("result", "refused"), ("reason", reason)], factory: factory).increment(by: 0)
        }
        _ = Recorder(label: Label.batchEvents, dimensions: [], aggregate: true, factory: factory)
        for reason in SignatureVerifier<ServerRequestContext>.Reason.allCases {
            Counter(label: Label.refusals, dimensions: [("reason", reason.rawValue)], factory: factory).increment(by: 0)
        }
    }

    /// Hummingbird's metric names as Prometheus names them: for a `PrometheusMetricsFactory`'s
    /// `nameAndLabelSanitizer`. Runway's own names pass unchanged; the registry turns the dots
    /// left in names and labels into underscores.
    public static func prometheusNames(_ label: String, _ dimensions: [(String, String)]) -> (String, [(String, String)]) {
        switch label {
        case "hb.requests": ("hb_requests_total", dimensions)
        case "hb.request.errors": ("hb_request_errors_total", dimensions)
        case "http.server.request.duration": ("http_server_request_duration_seconds", dimensions)
        default: (label, dimensions)
        }
    }

    func batchAccepted(events: Int, stored: Int, duplicates: Int, refusedReasons: [String]) {
        Counter(label: Label.batches, dimensions: [("outcome", "accepted")], factory: factory).increment()
        Recorder(label: Label.batchEvents, dimensions: [], aggregate: true, factory: factory).record(events)
        if stored > 0 {
            Counter(label: Label.events, dimensions: [("result", "stored"), ("reason", "")], factory: factory).increment(by: stored)
        }
        if duplicates > 0 {
            Counter(label: Label.events, dimensions: [("result", "duplicate"), ("reason", "")], factory: factory)
                .increment(by: duplicates)
        }
        var byReason: [String: Int] = [:]
        for reason in refusedReasons { byReason[reason, default: 0] += 1 }
        for (reason, count) in byReason {
            Counter(label: Label.events, dimensions: [("result", "refused"), ("reason", reason)], factory: factory)
                .increment(by: count)
        }
    }

    func batchRefused(_ reason: String) {
        Counter(label: Label.batches, dimensions: [("outcome", reason)], factory: factory).increment()
    }

    func verifierRefused(_ reason: String) {
        Counter(label: Label.refusals, dimensions: [("reason", reason)], factory: factory).increment()
    }

    func nonceStore(entries: Int, capacity: Int) {
        Gauge(label: Label.nonceEntries, dimensions: [], factory: factory).record(entries)
        Gauge(label: Label.nonceCapacity, dimensions: [], factory: factory).record(capacity)
    }
}
