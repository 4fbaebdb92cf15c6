import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

@Suite("API managers: delivery, params, validators", .timeLimit(.minutes(10)))
@MainActor
struct APIManagerTests {
    @Test("a delegate load is delivered exactly once, later, on the main actor", arguments: TransportKind.allCases)
    func delegateDelivery(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = APIManager(SecondHandListAPI(), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let id = manager.loadData(with: ["page": 1])
            #expect(id != nil)
            #expect(delegate.events.isEmpty, "nothing may be delivered from inside loadData")
            #expect(manager.isLoading)
            await delegate.waitForEvents(1)
            #expect(delegate.events.first?.isSuccess == true)
            #expect(manager.rawResponse?.json?["code"] == 0)
            #expect(!manager.isLoading)

            // A second load that fails: had the first been delivered twice, it would show here.
            manager.loadData(with: ["city": "atlantis"])
            await delegate.waitForEvents(2)
            #expect(delegate.events.count == 2)
            #expect(delegate.events[1].error == .business(code: 1001, message: "city not served"))
            #expect(manager.lastError == .business(code: 1001, message: "city not served"))
        }
    }

    @Test("an async load returns the same outcome the delegate would get, and the delegate hears nothing")
    func asyncLoad() async throws {
        try await withHarness { harness in
            let manager = APIManager(RentalListAPI(), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let response = try await manager.load(with: ["page": 2, "page_size": 5])
            #expect(response.payload?["page"] == 2)
            #expect(response.payload?["items"]?.arrayValue?.count == 5)
            await #expect(throws: RunwayError.business(code: 1001, message: "city not served")) {
                try await manager.load(with: ["city": "atlantis"])
            }
            #expect(delegate.events.isEmpty)
        }
    }

    @Test("a load cancelled after its answer arrived but before it landed is cancelled for everyone, once", arguments: TransportKind.allCases)
    func cancelledOnTheWayToLanding(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            var api = AdHocAPI(path: "/faults/gate/landing-race")
            api.requestStrategy = .ignoreNewWhileLoading
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let caller = Task { try await manager.load() }
            await harness.probe.wait(for: .gateWaiting)
            #expect(manager.loadData() == nil, "the delegate joins the caller's load")

            // The cancellation runs on the main actor before the answer, which the caller that
            // started the load would land there.
            #expect(harness.openGateHoldingMainActor("landing-race") { manager.cancelAllRequests() })

            await #expect(throws: RunwayError.cancelled) { try await caller.value }
            await delegate.waitForEvents(1)
            #expect(delegate.events.count == 1)
            #expect(delegate.events.first?.error == .cancelled)
            #expect(!manager.isLoading)
            #expect(manager.rawResponse == nil, "a cancelled load's answer is dropped")
            #expect(harness.log.lines.last?.metadata["runway.outcome"] == "success", "the answer did arrive")
        }
    }

    @Test("the param source supplies params when a load has none")
    func paramSource() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/echo/source"), engine: harness.engine)
            let source = CountingParamSource()
            manager.paramSource = source
            let response = try await manager.load()
            #expect(response.json?["query"] == "q=from-source")
            #expect(source.asked == 1)
            let explicit = try await manager.load(with: ["q": "explicit"])
            #expect(explicit.json?["query"] == "q=explicit")
            #expect(source.asked == 1)
        }
    }

    @Test("invalid params fail with the validator's reason and never reach the server")
    func paramsValidator() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/echo/validated")
            api.paramsValidator = ParamsValidation { params throws(ValidationFailure) in
                guard let phone = params["phone"]?.stringValue, phone.count == 11 else {
                    throw ValidationFailure("phone must have 11 digits")
                }
            }
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData(with: ["phone": "123"])
            #expect(delegate.events.isEmpty)
            await delegate.waitForEvents(1)
            #expect(delegate.events[0].error == .paramsInvalid(reason: "phone must have 11 digits"))
            let good = try await manager.load(with: ["phone": "13800000000"])
            #expect(good.json?["query"] == "phone=13800000000")
            #expect(harness.probe.count("/echo") == 1, "only the valid load may reach the server")
        }
    }

    @Test("required params are checked by name")
    func requiredParams() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/echo/required")
            api.paramsValidator = .required("city", "page")
            let manager = APIManager(api, engine: harness.engine)
            await #expect(throws: RunwayError.paramsInvalid(reason: "\"page\" is required")) {
                try await manager.load(with: ["city": "sh"])
            }
            await #expect(throws: RunwayError.paramsInvalid(reason: "\"city\" must not be empty")) {
                try await manager.load(with: ["city": "", "page": 1])
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("the response validator runs after landing, off the main actor, and its refusal is an invalid response")
    func responseValidator() async throws {
        try await withHarness { harness in
            let ranOnMain = TestBox(false)
            var api = AdHocAPI(path: "/listings/esf")
            api.responseValidator = ResponseValidation { response throws(ValidationFailure) in
                ranOnMain.set(Thread.isMainThread)
                guard (response.json?["data"]?["items"]?.arrayValue?.count ?? 0) >= 100 else {
                    throw ValidationFailure("fewer than 100 items")
                }
            }
            let manager = APIManager(api, engine: harness.engine)
            await #expect(throws: RunwayError.invalidResponse(reason: "fewer than 100 items")) {
                try await manager.load()
            }
            #expect(ranOnMain.value == false)
            #expect(manager.rawResponse == nil, "a refused response is not kept")
        }
    }

    @Test("several services at once, each with its own base URL and convention")
    func severalServices() async throws {
        try await withHarness { harness in
            let other = try await DemoServer.start()
            defer { Task { await other.stop() } }
            try harness.engine.register(Service(id: "other", environment: .develop, baseURLs: [.develop: other.baseURL]))
            var api = AdHocAPI(path: "/listings/esf")
            api.service = "other"
            // The other service is status-only: a business error body would still be a success there.
            let otherManager = APIManager(api, engine: harness.engine)
            let onOther = try await otherManager.load(with: ["city": "atlantis"])
            #expect(onOther.json?["code"] == 1001)
            #expect(other.probe.count("/listings/esf") == 1)
            // The listing service reads the envelope.
            let listings = APIManager(SecondHandListAPI(), engine: harness.engine)
            await #expect(throws: RunwayError.business(code: 1001, message: "city not served")) {
                try await listings.load(with: ["city": "atlantis"])
            }
            #expect(harness.probe.count("/listings/esf") == 1)
        }
    }

    @Test("an API whose service is not registered fails as an invalid request")
    func unknownService() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/x")
            api.service = "nowhere"
            await #expect(throws: RunwayError.invalidRequest(reason: "no service is registered as \"nowhere\"")) {
                try await APIManager(api, engine: harness.engine).load()
            }
        }
    }

    @Test("switching a service's environment at run time changes where its APIs go")
    func environmentSwitch() async throws {
        try await withHarness { harness in
            try harness.engine.register(
                Service(
                    id: "env", environment: .release,
                    baseURLs: [.release: "http://127.0.0.1:1", .develop: harness.server.baseURL]))
            var api = AdHocAPI(path: "/echo/env")
            api.service = "env"
            let manager = APIManager(api, engine: harness.engine)
            await #expect(throws: RunwayError.noNetwork(reason: .connectionRefused)) { try await manager.load() }
            #expect(harness.engine.setEnvironment(.develop, for: "env"))
            let switched = try await manager.load()
            #expect(switched.json?["path"] == "/echo/env")
            #expect(!harness.engine.setEnvironment(.develop, for: "missing"))
        }
    }

    @Test("common headers and params of the service reach the server")
    func commonHeadersAndParams() async throws {
        try await withHarness { harness in
            try harness.engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    commonHeaders: [.init("X-Client")!: "ios-5.1"], commonParams: ["v": "5.1"]))
            let echo = try await APIManager(AdHocAPI(path: "/echo/common"), engine: harness.engine).load(with: ["a": 1])
            #expect(echo.json?["query"] == "a=1&v=5.1")
            #expect(echo.json?["headers"]?["x-client"] == "ios-5.1")
        }
    }

    @Test("concurrent loads: each callback carries its own load's id and response", arguments: TransportKind.allCases)
    func callbacksCarryTheirLoad(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/gate/slow"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let slow = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)
            manager.api.path = "/echo/fast"
            let fast = try #require(manager.loadData())
            await delegate.waitForEvents(1)
            harness.probe.openGate("slow")
            await delegate.waitForEvents(2)
            #expect(delegate.loads == [fast, slow])
            guard case .success(let first?) = delegate.events[0], case .success(let second?) = delegate.events[1] else {
                Issue.record("both loads should succeed")
                return
            }
            #expect(first.json?["path"] == "/echo/fast")
            #expect(second.json?["data"]?["gate"] == "slow")
            // Reforming the response the callback carried, not whatever landed last.
            let path = try await manager.reform(first, with: PathReformer())
            #expect(path == "/echo/fast")
        }
    }

    @Test("a delegate that implements only the short callbacks still hears every load")
    func shortFormDelegate() async throws {
        final class ShortForm: APIManagerDelegate {
            var succeeded = 0
            var continuation: CheckedContinuation<Void, Never>?
            func apiManagerDidSucceed(_ manager: any APIManaging) {
                succeeded += 1
                continuation?.resume()
                continuation = nil
            }
        }
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/echo/short"), engine: harness.engine)
            let delegate = ShortForm()
            manager.delegate = delegate
            await withCheckedContinuation { continuation in
                delegate.continuation = continuation
                manager.loadData()
            }
            #expect(delegate.succeeded == 1)
        }
    }

}


/// The echoed path of a response.
struct PathReformer: Reformer {
    func reform(_ response: RawResponse) throws -> String { response.json?["path"]?.stringValue ?? "" }
}

/// A param source that supplies `q=from-source` and counts how often it was asked.
final class CountingParamSource: APIManagerParamSource {
    var asked = 0

    func params(for manager: any APIManaging) -> Parameters {
        asked += 1
        return ["q": "from-source"]
    }
}
