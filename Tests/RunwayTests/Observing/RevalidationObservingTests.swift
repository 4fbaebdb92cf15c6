import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import Runway
import RunwayTestSupport
import Testing
@testable import Runway

/// A `304` that confirms a stored answer is a cache hit with a network round trip: counted as
/// `revalidated` in metrics, recorded as the load's outcome and as one exchange (the
/// conditional request and its 304) for HAR, and said on the load's span.
@Suite("Observing a revalidation", .timeLimit(.minutes(10)))
struct RevalidationObservingTests {
    @Test("metrics, the recorder (HAR) and the span each say revalidated")
    func revalidationIsObserved() async throws {
        let metrics = TestMetrics()
        let recorder = LoadRecorder(bodyLimit: 64)
        let tracer = InMemoryTracer()
        let clock = TestBox(Date().addingTimeInterval(-86_400))
        let cache = try ResponseCache(now: { clock.value })
        try await withServer { transport, server in
            let engine = Engine(
                transport: transport, cache: cache, metrics: EngineMetrics(factory: metrics), tracer: tracer, recorder: recorder)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            var api = AdHocAPI(path: "/caching/doc/observed", name: "Observed")
            api.cachePolicy = .memory()
            let params: Parameters = ["cc": "no-cache"]
            _ = try await engine.perform(api, params: params).get()
            let revalidated = try await engine.perform(api, params: params).get()
            #expect(revalidated.origin == .revalidated(tier: .memory))

            func counted(_ result: String, _ tier: String) -> Int64 {
                metrics.counterTotal(label: EngineMetrics.Label.cache, dimensions: [("api", "Observed"), ("result", result), ("tier", tier)])
            }
            #expect(counted("revalidated", "memory") == 1)
            #expect(counted("miss", "none") == 1, "the first load only: a revalidation is not a miss")
            #expect(recorder.loads.map(\.outcome).last == .revalidated(tier: .memory))
            let exchange = try #require(recorder.exchanges.last)
            #expect(exchange.response?.status.code == 304)
            #expect(exchange.request.headerFields[.ifNoneMatch] == "\"v1\"")
            let archive = try JSONSerialization.jsonObject(with: recorder.httpArchive()) as? [String: Any]
            let entries = (archive?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
            #expect((entries?.last?["response"] as? [String: Any])?["status"] as? Int == 304)
            let load = try #require(tracer.finishedSpans.last { $0.operationName == "Observed" })
            #expect(load.attributes["runway.origin"]?.toSpanAttribute() == "revalidated")
        }
    }
}
