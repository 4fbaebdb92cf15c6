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
/// | `runway_nonce_store_entries` · `runway_nonce_store_capacity` | gauge | — (the in-memory store only: a shared database's fill is the database's to report) |
///
/// Request durations come from Hummingbird's own `MetricsMiddleware`
/// (`http_server_request_duration_seconds`), which `runway serve` installs. Every dimension is
/// one of a fixed set, so no input can grow the series without bound.
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

    /// Reports through `factory` (the one bootstrapped in `MetricsSystem` by default).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
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
