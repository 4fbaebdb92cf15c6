import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

@Suite("Bad input: a clear, typed error, never a crash", .timeLimit(.minutes(10)))
@MainActor
struct BadInputTests {
    @Test("a non-JSON body with a JSON content type is an invalid response", arguments: TransportKind.allCases)
    func notJSON(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            await #expect {
                try await APIManager(AdHocAPI(path: "/faults/not-json"), engine: harness.engine).load()
            } throws: { error in
                guard case .invalidResponse(let reason) = error as? RunwayError else { return false }
                return reason.hasPrefix("the body is not JSON")
            }
        }
    }

    @Test("an empty body on 200 is no content", arguments: TransportKind.allCases)
    func emptyBody(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            await #expect(throws: RunwayError.noContent) {
                try await APIManager(AdHocAPI(path: "/faults/empty"), engine: harness.engine).load()
            }
        }
    }

    @Test("404 and 500 with HTML bodies are HTTP status errors carrying the body", arguments: TransportKind.allCases, [404, 500])
    func htmlStatus(_ transport: TransportKind, _ status: Int) async throws {
        try await withHarness(transport) { harness in
            await #expect {
                try await APIManager(AdHocAPI(path: "/faults/status/\(status)"), engine: harness.engine).load()
            } throws: { error in
                guard case .httpStatus(let code, let body) = error as? RunwayError else { return false }
                return code == status && String(decoding: body, as: UTF8.self).contains("<html>")
            }
        }
    }

    @Test("a response that never ends times out", arguments: TransportKind.allCases)
    func timeout(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            var api = AdHocAPI(path: "/faults/hang")
            api.timeout = .milliseconds(300)
            await #expect(throws: RunwayError.timeout) { try await APIManager(api, engine: harness.engine).load() }
            await harness.probe.waitForClose(ifSeen: "/faults/hang")
        }
    }

    @Test("a refused connection is no network (refused)", arguments: TransportKind.allCases)
    func connectionRefused(_ transport: TransportKind) async throws {
        let nothingListens = try LoopbackSocket()
        defer { nothingListens.close() }
        try await withHarness(transport) { harness in
            try harness.engine.register(
                Service(id: "dead", environment: .develop, baseURLs: [.develop: nothingListens.refusingBaseURL]))
            var api = AdHocAPI(path: "/listings/esf")
            api.service = "dead"
            await #expect(throws: RunwayError.noNetwork(reason: .connectionRefused)) {
                try await APIManager(api, engine: harness.engine).load()
            }
        }
    }

    @Test("a base URL without a scheme fails before any connection")
    func baseURLWithoutScheme() async throws {
        try await withHarness { harness in
            try harness.engine.register(
                Service(id: "noscheme", environment: .develop, baseURLs: [.develop: "127.0.0.1:\(harness.server.port)"]))
            var api = AdHocAPI(path: "/echo/x")
            api.service = "noscheme"
            await #expect {
                try await APIManager(api, engine: harness.engine).load()
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                return reason.contains("no http or https scheme")
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("params that cannot be encoded never leave the device")
    func unencodableParams() async throws {
        try await withHarness { harness in
            let post = APIManager(AdHocAPI(path: "/echo/x", method: .post), engine: harness.engine)
            await #expect(throws: RunwayError.paramsUnencodable(reason: "nan is not a JSON number")) {
                try await post.load(with: ["price": .double(.nan)])
            }
            let get = APIManager(AdHocAPI(path: "/echo/x"), engine: harness.engine)
            await #expect {
                try await get.load(with: ["filter": ["nested": ["deep": 1]]])
            } throws: { error in
                guard case .paramsUnencodable = error as? RunwayError else { return false }
                return true
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("a business error from the service's convention carries code and message")
    func businessError() async throws {
        try await withHarness { harness in
            let api = AdHocAPI(path: "/listings/esf", service: .listings)
            await #expect(throws: RunwayError.business(code: 1001, message: "city not served")) {
                try await APIManager(api, engine: harness.engine).load(with: ["city": "atlantis"])
            }
        }
    }
}

import RunwayExamples

@Suite("The engine's deadline, for a transport that honours only task cancellation", .timeLimit(.minutes(10)))
@MainActor
struct EngineTimeoutTests {
    @Test("a transport that never answers is timed out by the engine")
    func engineRace() async throws {
        let silent = StubTransport { _ in
            try await Task.sleep(for: .seconds(3600))
            throw RunwayError.transport(description: "unreachable")
        }
        #expect(!silent.honoursCancellation)
        let engine = Engine(transport: silent)
        try engine.register(Service(id: .test, baseURLs: [.release: "https://api.example.com"]))
        var api = AdHocAPI(path: "/slow")
        api.timeout = .milliseconds(100)
        await #expect(throws: RunwayError.timeout) { try await APIManager(api, engine: engine).load() }
    }
}
