public import CoreMetrics

/// What the engine reports through swift-metrics, with dimensions that cannot grow without
/// bound: the API's name, the service, an outcome, a cache tier — never URLs or params.
///
/// | label | kind | dimensions |
/// |---|---|---|
/// | `runway_loads_total` | counter | `api`, `service`, `outcome` (`success`, `cancelled`, or the error's message key such as `error.timeout`) |
/// | `runway_load_duration_seconds` | timer | `api`, `service` |
/// | `runway_retries_total` | counter | `api`, `service` |
/// | `runway_cache_total` | counter | `api`, `result` (`hit`, `stale`, `revalidated`, `miss`), `tier` (`memory`, `disk`, `none`) |
/// | `runway_coalesced_total` | counter | `api` (loads that joined an identical load in flight) |
///
/// Metric objects are made once per dimension set and kept, so a load costs a dictionary
/// lookup per metric, not a factory call; over swift-metrics' no-op factory (what
/// `MetricsSystem` holds until an app bootstraps one) a load costs nothing at all.
public final class EngineMetrics: Sendable {
    /// Metric labels.
    public enum Label {
        public static let loads = "runway_loads_total"
        public static let duration = "runway_load_duration_seconds"
        public static let retries = "runway_retries_total"
        public static let cache = "runway_cache_total"
        public static let coalesced = "runway_coalesced_total"
    }

    private struct Key: Hashable {
        var label: String
        var first: String
        var second: String
        var third: String
    }

    private let factory: any MetricsFactory
    /// Whether anything is reported: not over the no-op factory, whose metrics drop every
    /// value (the factory is taken once, here, so bootstrapping later changes nothing either).
    let reports: Bool
    private let counters = Locked<[Key: Counter]>([:])
    private let timers = Locked<[Key: CoreMetrics.Timer]>([:])

    /// Reports through `factory` (the one bootstrapped in `MetricsSystem` by default).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        reports = !(factory is NOOPMetricsHandler)
    }

    func load(api: String, service: ServiceID, outcome: String, duration: Duration, retries: Int) {
        guard reports else { return }
        let serviceName = service.rawValue
        counter(Key(label: Label.loads, first: api, second: serviceName, third: outcome)) {
            [("api", api), ("service", serviceName), ("outcome", outcome)]
        }.increment()
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        timer(Key(label: Label.duration, first: api, second: serviceName, third: "")) {
            [("api", api), ("service", serviceName)]
        }.recordNanoseconds(nanoseconds)
        if retries > 0 {
            counter(Key(label: Label.retries, first: api, second: serviceName, third: "")) {
                [("api", api), ("service", serviceName)]
            }.increment(by: retries)
        }
    }

    func cache(api: String, result: String, tier: String) {
        guard reports else { return }
        counter(Key(label: Label.cache, first: api, second: result, third: tier)) {
            [("api", api), ("result", result), ("tier", tier)]
        }.increment()
    }

    func coalesced(api: String) {
        guard reports else { return }
        counter(Key(label: Label.coalesced, first: api, second: "", third: "")) { [("api", api)] }.increment()
    }

    private func counter(_ key: Key, dimensions: () -> [(String, String)]) -> Counter {
        counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: key.label, dimensions: dimensions(), factory: factory)
            counters[key] = counter
            return counter
        }
    }

    private func timer(_ key: Key, dimensions: () -> [(String, String)]) -> CoreMetrics.Timer {
        timers.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = CoreMetrics.Timer(label: key.label, dimensions: dimensions(), factory: factory)
            timers[key] = timer
            return timer
        }
    }
}
