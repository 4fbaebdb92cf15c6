import Crypto
import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// Request adapters: a change to every request before it leaves — every attempt, every
/// same-origin hop, before the credential and the signer — without registering a service again.
@Suite("Request adapters", .timeLimit(.minutes(10)))
struct RequestAdapterTests {
    static let traceField = HTTPField.Name("X-Trace-Id")!

    /// Sets `X-Trace-Id` to `trace-ATTEMPT-HOP` and records each context it saw.
    struct TraceID: RequestAdapter {
        let seen = TestBox<[AdaptingContext]>([])
        func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
            seen.mutate { $0.append(context) }
            request.headerFields[RequestAdapterTests.traceField] = "trace-\(context.attempt)-\(context.hop)"
        }
    }

    /// The app's language and a device id, read when each request leaves.
    struct AppSettings: RequestAdapter {
        let language = TestBox("fr")
        func adaptParams(_ params: inout Parameters, context: AdaptingContext) async throws {
            params["device"] = "d-42"
            params["drop"] = nil
        }
        func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
            request.headerFields[.acceptLanguage] = language.value
        }
    }

    struct Failing: RequestAdapter {
        struct Broken: Error {}
        var error: any Error = Broken()
        func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws { throw error }
    }

    @Test("what adapters add is signed: the verifier accepts it, and a changed setting shows on the next load with no new registration", arguments: TransportKind.allCases)
    func adaptedRequestsAreSigned(_ transport: TransportKind) async throws {
        let secret = SymmetricKey(data: Data(repeating: 3, count: 32))
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["app": [secret]]))
        let nio = transport == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let engine = Engine(transport: nio ?? URLSessionTransport())
            var service = Service(
                id: "signed",
                environment: .develop,
                baseURLs: [.develop: server.baseURL],
                credentials: .init(signer: HMACSigner(keyID: "app", secret: secret, signedHeaderFields: [Self.traceField, .acceptLanguage])))
            let trace = TraceID()
            service.adapters = [trace]
            try engine.register(service)
            let settings = AppSettings()
            var api = AdHocAPI(path: "/signed/echo/profile", service: "signed")
            api.adapters = [settings]

            let first = try await engine.perform(api, params: ["q": "x", "drop": "me"]).get()
            #expect(first.json?["headers"]?["x-trace-id"] == "trace-1-0")
            #expect(first.json?["headers"]?["accept-language"] == "fr")
            #expect(first.json?["query"]?.stringValue == "device=d-42&q=x")
            settings.language.set("de")
            let second = try await engine.perform(api, params: ["q": "x"]).get()
            #expect(second.json?["headers"]?["accept-language"] == "de")
            #expect(server.probe.count("/echo") == 2, "both verified and answered")
        }
    }

    @Test("adapters run again on every attempt and every same-origin hop, from the request as built", arguments: TransportKind.allCases)
    func everyAttemptAndHop(_ transport: TransportKind) async throws {
        try await withHarness(transport, sleep: { _ in }) { harness in
            var service = Service(id: "adapted", environment: .develop, baseURLs: [.develop: harness.server.baseURL])
            let trace = TraceID()
            service.adapters = [trace]
            try harness.engine.register(service)

            let hop = AdHocAPI(path: "/faults/redirect-to/307/echo/after", service: "adapted")
            let landed = try await harness.engine.perform(hop, params: [:]).get()
            #expect(landed.json?["headers"]?["x-trace-id"] == "trace-1-1")
            #expect(trace.seen.value.map { [$0.attempt, $0.hop] } == [[1, 0], [1, 1]])

            trace.seen.set([])
            var flaky = AdHocAPI(path: "/faults/flaky", service: "adapted")
            flaky.retryPolicy = RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1))
            _ = try await harness.engine.perform(flaky, params: ["key": "adapter", "failures": 2, "status": 503]).get()
            #expect(trace.seen.value.map { [$0.attempt, $0.hop] } == [[1, 0], [2, 0], [3, 0]])
            #expect(trace.seen.value.allSatisfy { $0.apiName == "AdHocAPI" && $0.service == "adapted" })
        }
    }

    @Test("a hop to another origin is not adapted, as it carries no credential")
    func otherOriginIsNotAdapted() async throws {
        let other = try await DemoServer.start()
        try await withCleanup({ await other.stop() }) {
            try await withHarness { harness in
                var service = Service(id: "adapted", environment: .develop, baseURLs: [.develop: harness.server.baseURL])
                let trace = TraceID()
                service.adapters = [trace]
                try harness.engine.register(service)
                var api = AdHocAPI(path: "/faults/redirect", service: "adapted")
                api.redirectPolicy = .crossOriginWithoutCredentials
                let landed = try await harness.engine.perform(api, params: ["to": .string(other.baseURL + "/echo/elsewhere")]).get()
                #expect(landed.json?["path"] == "/echo/elsewhere")
                #expect(landed.json?["headers"]?["x-trace-id"] == nil)
                #expect(trace.seen.value.count == 1)
            }
        }
    }

    @Test("an adapter that throws ends the load before anything is sent: its RunwayError as it is, anything else named", arguments: TransportKind.allCases)
    func throwingAdapter(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            var api = AdHocAPI(path: "/echo/never")
            api.adapters = [Failing()]
            let failed = await harness.engine.perform(api, params: [:])
            guard case .failure(.invalidRequest(let reason)) = failed else {
                Issue.record("\(failed)")
                return
            }
            #expect(reason.contains("Failing"))
            api.adapters = [Failing(error: RunwayError.vetoed(reason: "offline mode"))]
            await #expect(throws: RunwayError.vetoed(reason: "offline mode")) { try await harness.engine.perform(api, params: [:]).get() }
            // Through a manager too: the same exchange, the same adapters.
            await #expect(throws: RunwayError.vetoed(reason: "offline mode")) { try await APIManager(api, engine: harness.engine).load() }
            #expect(harness.probe.count("/echo") == 0)
        }
    }
}
