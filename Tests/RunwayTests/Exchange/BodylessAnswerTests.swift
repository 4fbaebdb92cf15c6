import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import RunwayTestSupport
import Testing

/// HEAD answers and 204/205 are successes without JSON, as Alamofire's empty-response rules say.
@Suite("Answers without a body", .timeLimit(.minutes(10)))
@MainActor
struct BodylessAnswerTests {
    @Test("a HEAD API succeeds with its header fields and no JSON", arguments: TransportKind.allCases)
    func head(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let response = try await APIManager(AdHocAPI(path: "/faults/no-content", method: .head), engine: harness.engine).load()
            #expect(response.status == .ok)
            #expect(response.json == nil)
            #expect(response.response.headerFields[HTTPField.Name("X-Resource-Version")!] == "7")
        }
    }

    @Test("a DELETE answered 204 succeeds, also under a code-envelope convention", arguments: TransportKind.allCases)
    func deleteNoContent(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            try harness.engine.register(
                Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL], convention: .codeEnvelope()))
            let manager = APIManager(AdHocAPI(path: "/faults/no-content", method: .delete), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData()
            await delegate.waitForEvents(1)
            guard case .success(let response?) = delegate.events[0] else {
                Issue.record("a 204 is a success, got \(delegate.events[0])")
                return
            }
            #expect(response.status == .noContent)
            #expect(response.json == nil)
        }
    }

    @Test("a 200 with an empty body is still noContent for a JSON API")
    func emptyTwoHundred() async throws {
        try await withHarness { harness in
            await #expect(throws: RunwayError.noContent) {
                try await APIManager(AdHocAPI(path: "/faults/empty"), engine: harness.engine).load()
            }
        }
    }
}
