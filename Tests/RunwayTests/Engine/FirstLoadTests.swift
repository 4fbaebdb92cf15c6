import Foundation
import HTTPTypes
@testable import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// Launch work that follows the first load: ``Engine/waitForFirstLoad(timeout:)`` and an
/// endpoint selector's first round wait for the engine's first load to end — answered by the
/// network or the cache, or failed — so that neither competes with it. Over a real server;
/// every wait that could outlast the test is on a clock the test holds or a day long, so
/// nothing here depends on how busy the machine is.
@Suite("The first load", .timeLimit(.minutes(10)))
struct FirstLoadTests {
    static let host = "localhost"

    @Test("a launch's waiter is released by the first load's end, after its answer came, not before")
    func waiterFollowsFirstLoad() async throws {
        let server = try await RawHTTPServer.start { _ in
            RawHTTPServer.Answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}")
        }
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
            let waiter = Task {
                await engine.waitForFirstLoad(timeout: .seconds(86_400))
                return server.requestCount
            }
            await Self.waitUntil { engine.firstLoad.waiting == 1 }
            #expect(!engine.firstLoad.hasEnded)
            _ = try await engine.perform(AdHocAPI(path: "/first")).get()
            #expect(await waiter.value == 1, "released once the first request had its answer")
            // Later waiters return at once.
            await engine.waitForFirstLoad(timeout: .seconds(86_400))
            #expect(engine.firstLoad.waiting == 0)
        }
    }

    @Test("a failed first load releases waiters too: a launch never waits on a server that is down")
    func failedLoadReleases() async throws {
        // A port held without a listener: the connection is refused, and no server started by
        // another test meanwhile can take it.
        let held = try LoopbackSocket()
        defer { held.close() }
        let port = held.port
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        try await withCleanup({ try? await transport.shutdown() }) {
            try engine.register(Service(id: .test, baseURLs: [.release: "http://127.0.0.1:\(port)"]))
            let waiter = Task { await engine.waitForFirstLoad(timeout: .seconds(86_400)) }
            await Self.waitUntil { engine.firstLoad.waiting == 1 }
            var api = AdHocAPI(path: "/down")
            api.retryPolicy = RetryPolicy(maximumRetries: 0)
            await #expect(throws: RunwayError.self) { try await engine.perform(api).get() }
            await waiter.value
            #expect(engine.firstLoad.hasEnded)
        }
    }

    @Test("a first load answered by the cache releases waiters: a warm launch sends nothing and waits for nothing")
    func cacheHitReleases() async throws {
        let server = try await RawHTTPServer.start { _ in
            RawHTTPServer.Answer(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\nCache-Control: max-age=600\r\n\r\n{}")
        }
        let transport = AsyncHTTPClientTransport()
        let cache = try ResponseCache()
        let filling = Engine(transport: transport, cache: cache)
        let launched = Engine(transport: transport, cache: cache)
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            let service = Service(id: .test, baseURLs: [.release: server.baseURL])
            try filling.register(service)
            try launched.register(service)
            var api = AdHocAPI(path: "/cached")
            api.cachePolicy = .memory(lifetime: .seconds(600))
            _ = try await filling.perform(api).get()
            let waiter = Task { await launched.waitForFirstLoad(timeout: .seconds(86_400)) }
            await Self.waitUntil { launched.firstLoad.waiting == 1 }
            let hit = try await launched.perform(api).get()
            await waiter.value
            #expect(hit.origin != .network, "answered by the cache")
            #expect(server.requestCount == 1, "nothing sent for the second engine's load")
        }
    }

    @Test("a first load that is a download releases waiters")
    func downloadReleases() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withHarness { harness in
            #expect(!harness.engine.firstLoad.hasEnded)
            let waiter = Task { await harness.engine.waitForFirstLoad(timeout: .seconds(86_400)) }
            await Self.waitUntil { harness.engine.firstLoad.waiting == 1 }
            let file = try await harness.engine.download(
                AdHocAPI(path: "/files/blob"), params: ["size": "10"], to: .caches("first.bin", in: container)
            ).value
            await waiter.value
            #expect(file.byteCount == 10)
        }
    }

    /// How a manager refuses a load before the engine runs it.
    enum Refusal: String, CaseIterable, CustomTestStringConvertible {
        case validatorOnTheMainActor, validatorFromABackgroundTask, paramsThatDoNotEncode
        var testDescription: String { rawValue }
    }

    @Test("a first load a manager refuses before sending ends the first load: waiters do not wait out their timeout",
          arguments: Refusal.allCases)
    @MainActor
    func refusedLoadReleases(_ refusal: Refusal) async throws {
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        try await withCleanup({ try? await transport.shutdown() }) {
            // Never contacted: every load here is refused before it is sent.
            try engine.register(Service(id: .test, baseURLs: [.release: "http://127.0.0.1:9"]))
            var api = AdHocAPI(path: "/refused")
            api.paramsValidator = .required("city")
            let manager = APIManager(api, engine: engine)
            let waiter = Task { await engine.waitForFirstLoad(timeout: .seconds(86_400)) }
            await Self.waitUntil { engine.firstLoad.waiting == 1 }
            switch refusal {
            case .validatorOnTheMainActor:
                #expect(manager.loadData(with: [:]) != nil)
            case .validatorFromABackgroundTask:
                let outcome = await Task.detached { () -> RunwayError? in
                    do throws(RunwayError) { _ = try await manager.load(with: [:]) } catch { return error }
                    return nil
                }.value
                #expect(outcome == .paramsInvalid(reason: "\"city\" is required"))
            case .paramsThatDoNotEncode:
                // An array does not encode to an object of params.
                #expect(manager.loadData(with: ["not", "an", "object"]) != nil)
            }
            #expect(engine.firstLoad.hasEnded, "refused, so ended")
            if !engine.firstLoad.hasEnded { waiter.cancel() }  // a failing run ends here, not at the time limit
            await waiter.value
        }
    }

    /// How the engine itself refuses a load before sending it.
    enum EngineRefusal: String, CaseIterable, CustomTestStringConvertible {
        case validator, interceptorVeto, paramsThatDoNotEncode, uploadsValidator, downloadsValidator
        var testDescription: String { rawValue }
    }

    /// An interceptor that lets no call through.
    struct Gatekeeper: Interceptor {
        func shouldCall(_ call: CallInfo) -> CallDecision { .veto(reason: "closed") }
    }

    @Test("a first load the engine refuses before sending ends the first load: waiters do not wait out their timeout",
          arguments: EngineRefusal.allCases)
    func engineRefusalReleases(_ refusal: EngineRefusal) async throws {
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withCleanup({ try? await transport.shutdown() }) {
            // Never contacted: every load here is refused before it is sent.
            try engine.register(Service(id: .test, baseURLs: [.release: "http://127.0.0.1:9"]))
            var api = AdHocAPI(path: "/refused", method: .post)
            api.paramsValidator = .required("city")
            let waiter = Task { await engine.waitForFirstLoad(timeout: .seconds(86_400)) }
            await Self.waitUntil { engine.firstLoad.waiting == 1 }
            /// The error a transfer ended with.
            func failure<Value>(of transfer: Transfer<Value>) async -> RunwayError? {
                do throws(RunwayError) { _ = try await transfer.value } catch { return error }
                return nil
            }
            let error: RunwayError?
            switch refusal {
            case .validator:
                error = await engine.perform(api).failure
            case .interceptorVeto:
                api.paramsValidator = AcceptAllParams()
                api.interceptors = [Gatekeeper()]
                error = await engine.perform(api).failure
            case .paramsThatDoNotEncode:
                // An array does not encode to an object of params.
                error = await engine.perform(api, params: ["not", "an", "object"]).failure
            case .uploadsValidator:
                error = await failure(of: engine.upload(api, body: .data(Data("{}".utf8), contentType: "application/json")))
            case .downloadsValidator:
                error = await failure(of: engine.download(api, to: .caches("refused.bin", in: container)))
            }
            switch (refusal, error) {
            case (.interceptorVeto, .vetoed(let reason)?): #expect(reason == "closed")
            case (.interceptorVeto, _): Issue.record("vetoed, not \(String(describing: error))")
            case (_, .paramsInvalid?): break
            default: Issue.record("refused for its params, not \(String(describing: error))")
            }
            #expect(engine.firstLoad.hasEnded, "refused, so ended")
            if !engine.firstLoad.hasEnded { waiter.cancel() }  // a failing run ends here, not at the time limit
            await waiter.value
        }
    }

    @Test("with no load, a waiter returns after its timeout, and a cancelled one at once; others keep waiting")
    func timeoutAndCancellation() async throws {
        let first = FirstLoad()
        let clock = ManualClock()
        let timed = Task { await first.wait(timeout: .seconds(2), clock: clock) }
        let cancelled = Task { await first.wait(timeout: .seconds(86_400), clock: clock) }
        let patient = Task { await first.wait(timeout: .seconds(86_400), clock: clock) }
        await clock.waitForSleeps(3)
        await Self.waitUntil { first.waiting == 3 }
        clock.advance(by: .seconds(2))
        await timed.value
        cancelled.cancel()
        await cancelled.value
        #expect(first.waiting == 1, "the patient waiter still waits")
        #expect(!first.hasEnded)
        first.loadEnded()
        await patient.value
        #expect(first.waiting == 0)
    }

    @Test("an endpoint selector's first round follows the first load: no probe while the first request flies")
    func selectorWaitsForFirstLoad() async throws {
        let clock = ManualClock()  // the first round's wait never times out here
        let selectorBox = Locked<EndpointSelector?>(nil)
        let seenWhileAnswering = Locked<(rounds: Int, probes: Int)?>(nil)
        let server = try await RawHTTPServer.start { _ in
            if let selector = selectorBox.withLock({ $0 }) {
                seenWhileAnswering.withLock { $0 = (selector.rounds, selector.peakConcurrentProbes) }
            }
            return RawHTTPServer.Answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}")
        }
        try await Self.withSelector(on: server, clock: clock) { engine, selector in
            selectorBox.withLock { $0 = selector }
            await clock.waitForSleeps(1)  // the round waits for the first load
            #expect(selector.rounds == 0 && selector.peakConcurrentProbes == 0)
            _ = try await engine.perform(AdHocAPI(path: "/first")).get()
            let seen = seenWhileAnswering.withLock { $0 }
            #expect(seen?.rounds == 0 && seen?.probes == 0, "nothing probed while the first request was answered")
            // The clock never moved: the load's end began the round.
            await selector.waitForRound(after: 0)
            #expect(selector.address == "127.0.0.1")
        }
    }

    @Test("with no request, an endpoint selector's first round begins once its first-round wait has passed")
    func selectorRoundWithoutRequest() async throws {
        let server = try await RawHTTPServer.start { _ in RawHTTPServer.Answer("HTTP/1.1 204 No Content\r\n\r\n") }
        let clock = ManualClock()
        try await Self.withSelector(on: server, clock: clock) { _, selector in
            await clock.waitForSleeps(1)
            #expect(selector.rounds == 0)
            clock.advance(by: selector.probing.firstRoundWait)
            await selector.waitForRound(after: 0)
            #expect(selector.address == "127.0.0.1")
        }
    }

    /// Runs `body` with an engine over AsyncHTTPClient and `server`'s service registered behind an
    /// endpoint selector for `localhost` whose rounds run on `clock` (one attempt a candidate);
    /// the selector, the transport and the server are stopped after.
    static func withSelector(
        on server: RawHTTPServer, clock: ManualClock, _ body: (Engine, EndpointSelector) async throws -> Void
    ) async throws {
        var probing = EndpointSelector.Probing()
        probing.clock = clock
        probing.attempts = 1
        let selector = EndpointSelector(
            host: host, port: server.port, candidates: ["127.0.0.1"], scheme: "http", probing: probing)
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        try await withCleanup({
            selector.stop()
            try? await transport.shutdown()
            await server.stop()
        }) {
            try engine.register(
                Service(
                    id: .test, baseURLs: [.release: "http://\(host):\(server.port)"], connection: .init(endpoints: selector)))
            try await body(engine, selector)
        }
    }

    /// Yields until `condition` holds: for state another task sets without a signal of its own
    /// (a waiter put in place). Never a deadline: the suite's time limit ends a test that hangs.
    static func waitUntil(_ condition: @Sendable () -> Bool) async {
        while !condition() { await Task.yield() }
    }
}
