import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayTestSupport
import Testing

/// An authenticator that sends its credential in the query, under a name that says nothing.
struct QueryKeyAuthenticator: Authenticator {
    let key: String

    func credential() async throws -> String? { key }

    func apply(_ key: String, to request: inout HTTPRequest) {
        let path = request.path ?? "/"
        request.path = path + (path.contains("?") ? "&" : "?") + "k=" + key
    }

    func refresh(_ expired: String?) async throws -> String { key }
}

/// One redaction rule for every place a request or an answer is shown or written: the answer's
/// request, the log line and the HAR record never hold a secret the request or answer carried.
@Suite("Secrets stay out of what is shown and written", .timeLimit(.minutes(10)))
struct RedactionTests {
    @Test(
        "a secret query param, an authenticator's query credential, a token exchange's bodies and a session cookie: in no record",
        arguments: TransportKind.allCases)
    func nothingRecorded(_ kind: TransportKind) async throws {
        try await withServer(kind) { transport, server in
            let recorder = LoadRecorder()
            let log = LogCapture()
            let engine = Engine(
                transport: transport, logger: Logger(label: "runway.test") { _ in log }, metrics: nil, recorder: recorder)
            try engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: server.baseURL],
                    credentials: .init(authentication: Authentication(QueryKeyAuthenticator(key: "K3y-of-the-user")))))
            try engine.register(Service(id: "tokens", environment: .develop, baseURLs: [.develop: server.baseURL]))

            // `/health` answers without echoing what it was sent (an echo's answer would hold the
            // secrets as data of its own).
            let checked = try await engine.perform(AdHocAPI(path: "/health"), params: ["access_token": "s3cret-token", "page": 2]).get()
            let token = AdHocAPI(service: "tokens", path: "/auth/token", method: .post, paramEncoding: .json)
            let issued = try await engine.perform(token, params: ["refresh_token": "R3fresh"]).get()
            let accessToken = try #require(issued.json?["access_token"]?.stringValue)
            _ = try await engine.perform(AdHocAPI(service: "tokens", path: "/faults/set-cookie")).get()

            // What the app is handed, logs and records holds none of them.
            let shown = checked.request.path ?? ""
            #expect(!shown.contains("s3cret-token") && !shown.contains("K3y-of-the-user"), "\(shown)")
            #expect(shown.contains("page=2"), "other params stay readable")

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try await recorder.writeHTTPArchive(to: file)
            let archive = try String(contentsOf: file, encoding: .utf8)
            let lines = log.lines.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            for secret in ["s3cret-token", "K3y-of-the-user", "R3fresh", accessToken, "session=abc"] {
                #expect(!archive.contains(secret), "the HAR file holds \(secret)")
                #expect(!lines.contains(secret), "the log holds \(secret)")
            }
            #expect(archive.contains("refresh_token") && archive.contains("<redacted>"), "names stay, values go")
        }
    }
}
