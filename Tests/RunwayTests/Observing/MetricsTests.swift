import CoreMetrics
import Foundation
import Logging
import MetricsTestKit
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The engine's swift-metrics, read back through the test kit's factory: one engine per test,
/// so no global bootstrap and no counts from other tests.
@Suite("Metrics", .timeLimit(.minutes(10)))
@MainActor
struct MetricsTests {
    static func engine(_ metrics: TestMetrics, server: DemoServer, cache: ResponseCache? = nil) throws -> (Engine, AsyncHTTPClientTransport) {
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(
            transport: transport, cache: cache, logger: Logger(label: "runway.test") { _ in SwiftLogNoOpLogHandler() },
            metrics: EngineMetrics(factory: metrics))
        try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
        return (engine, transport)
    }

    @Test("Loads by API and outcome, their duration, and retries; no URL or param in any dimension")
    func loadsOutcomesRetries() async throws {
        let server = try await DemoServer.start()
        let metrics = TestMetrics()
        let (engine, transport) = try Self.engine(metrics, server: server)
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            let ok = AdHocAPI(path: "/echo/one", name: "Listing")
            _ = try await engine.perform(ok, params: ["secret": "do-not-export"]).get()
            _ = try await engine.perform(ok, params: [:]).get()
            var failing = AdHocAPI(path: "/faults/status/503", name: "Flaky")
            failing.retryPolicy = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(1))
            _ = await engine.perform(failing, params: [:])

            let success = try metrics.expectCounter(
                EngineMetrics.Label.loads, [("api", "Listing"), ("service", "test"), ("outcome", "success")])
            #expect(success.totalValue == 2)
            let failure = try metrics.expectCounter(
                EngineMetrics.Label.loads, [("api", "Flaky"), ("service", "test"), ("outcome", "error.httpStatus")])
            #expect(failure.totalValue == 1)
            #expect(try metrics.expectCounter(EngineMetrics.Label.retries, [("api", "Flaky"), ("service", "test")]).totalValue == 1)
            let timer = try metrics.expectTimer(EngineMetrics.Label.duration, [("api", "Listing"), ("service", "test")])
            #expect(timer.values.count == 2 && timer.values.allSatisfy { $0 > 0 })
            let everyDimension = metrics.counters.flatMap(\.dimensions).map(\.1) + metrics.timers.flatMap(\.dimensions).map(\.1)
            #expect(!everyDimension.contains { $0.contains("/") || $0.contains("do-not-export") || $0.contains("127.0.0.1") })
        }
    }

    @Test("Cache: a miss, a memory hit, and a disk hit from a new engine on the same container")
    func cacheTiers() async throws {
        let server = try await DemoServer.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-metrics-\(UUID().uuidString)")
        let container = Container(root: folder)
        let metrics = TestMetrics()
        let firstCache = try ResponseCache(container: container)
        let (engine, transport) = try Self.engine(metrics, server: server, cache: firstCache)
        let (restarted, restartedTransport) = try Self.engine(metrics, server: server, cache: try ResponseCache(container: container))
        try await withCleanup({
            try? await transport.shutdown()
            try? await restartedTransport.shutdown()
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
        }) {
            var api = AdHocAPI(path: "/echo/cached", name: "Cached")
            api.cachePolicy = .memoryAndDisk()
            _ = try await engine.perform(api, params: [:]).get()
            _ = try await engine.perform(api, params: [:]).get()
            // The disk tier stores behind the load (on its queue): the entry is there once that
            // work is done, as it is for a real restart (a loaded machine left it unwritten).
            await firstCache.waitForDiskWork()
            _ = try await restarted.perform(api, params: [:]).get()
            func cache(_ result: String, _ tier: String) -> Int64 {
                metrics.counterTotal(label: EngineMetrics.Label.cache, dimensions: [("api", "Cached"), ("result", result), ("tier", tier)])
            }
            #expect(cache("miss", "none") == 1)
            #expect(cache("hit", "memory") == 1)
            #expect(cache("hit", "disk") == 1)
            #expect(server.probe.count("/echo") == 1)
        }
    }

    @Test("EngineMetrics reports nothing over swift-metrics' no-op factory (none bootstrapped), and reports over any other")
    func noOpFactoryCostsNothing() {
        // The tests above read every load's metrics back through a factory of their own.
        #expect(!EngineMetrics(factory: NOOPMetricsHandler.instance).reports)
        #expect(EngineMetrics(factory: TestMetrics()).reports)
    }

    @Test("Coalesced joins: five identical loads in flight, four joined")
    func coalescedJoins() async throws {
        let cache = try ResponseCache()
        let metrics = TestMetrics()
        try await withHarness(cache: cache) { harness in
            let engine = Engine(transport: harness.engine.transport, cache: cache, metrics: EngineMetrics(factory: metrics))
            try engine.register(Service(id: .test, baseURLs: [.release: harness.server.baseURL]))
            let watch = JoinWatch()
            watch.install(on: engine)
            var api = AdHocAPI(path: "/faults/gate/metrics", name: "Shared")
            api.cachePolicy = .memory()
            let managers = (0..<5).map { _ in APIManager(api, engine: engine) }
            let loads = managers.map { manager in Task { try await manager.load() } }
            await watch.wait(for: 5)
            harness.probe.openGate("metrics")
            for load in loads { _ = try await load.value }
            #expect(metrics.counterTotal(label: EngineMetrics.Label.coalesced, dimensions: [("api", "Shared")]) == 4)
            #expect(
                metrics.counterTotal(
                    label: EngineMetrics.Label.loads, dimensions: [("api", "Shared"), ("service", "test"), ("outcome", "success")])
                    == 5)
        }
    }
}
