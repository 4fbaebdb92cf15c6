public import Hummingbird
public import Prometheus

/// `GET /metrics`: a registry's samples in Prometheus' text format, for a scraper.
///
/// Give the verifier and the collector a ``ServerMetrics`` over the same factory, and add
/// Hummingbird's `MetricsMiddleware` for request durations (through the factory bootstrapped in
/// `MetricsSystem`), as `runway serve` does.
public enum PrometheusEndpoint {
    /// Adds `GET /metrics`, answering `registry`'s samples (never cached).
    public static func add<Context: RequestContext>(to router: Router<Context>, registry: PrometheusCollectorRegistry) {
        router.get("/metrics") { _, _ -> Response in
            var response = Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }
}
