import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing

@Suite("One log line per request, secrets redacted", .timeLimit(.minutes(10)))
@MainActor
struct LoggingTests {
    struct TokenSigner: RequestSigner {
        func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
            request.headerFields[.authorization] = "Bearer SECRET-BEARER"
            request.headerFields[.init("X-Signature")!] = "SECRET-SIGNATURE"
        }
    }

    @Test("a request logs id, service, API, method, status, duration, bytes and outcome")
    func fields() async throws {
        try await withHarness { harness in
            try harness.registerServices(signer: TokenSigner())
            var api = AdHocAPI(path: "/echo/logged")
            api.name = "LoggedAPI"
            let manager = APIManager(api, engine: harness.engine)
            try await manager.load(with: ["access_token": "SECRET-TOKEN", "sign": "SECRET-SIGN", "keyword": "flats"])
            let lines = harness.log.lines.filter { $0.metadata["runway.api"] == "LoggedAPI" }
            try #require(lines.count == 1)
            let line = lines[0]
            #expect(line.metadata["runway.service"] == "test")
            #expect(line.metadata["http.method"] == "GET")
            #expect(line.metadata["http.status"] == "200")
            #expect(line.metadata["http.version"] == "HTTP/1.1")
            #expect(line.metadata["runway.outcome"] == "success")
            #expect(Int(line.metadata["runway.bytes"] ?? "") ?? 0 > 0)
            #expect(Double(line.metadata["runway.duration_ms"] ?? "") != nil)
            #expect(line.metadata["runway.load"]?.hasPrefix("#") == true)
            #expect(line.message.contains("keyword=flats"))
            let everything = harness.log.lines.map { "\($0.message) \($0.metadata)" }.joined()
            for secret in ["SECRET-TOKEN", "SECRET-SIGN", "SECRET-BEARER", "SECRET-SIGNATURE"] {
                #expect(!everything.contains(secret), "\(secret) leaked into the log")
            }
            #expect(line.message.contains("access_token=<redacted>"))
        }
    }

    @Test("a failure logs its outcome")
    func failureOutcome() async throws {
        try await withHarness { harness in
            _ = try? await APIManager(AdHocAPI(path: "/faults/status/500"), engine: harness.engine).load()
            let line = try #require(harness.log.lines.last)
            #expect(line.metadata["http.status"] == "500")
            #expect(line.metadata["runway.outcome"] == "failure: error.httpStatus")
            #expect(line.level == .notice)
        }
    }
}
