import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// An API whose `Encodable` bodies use snake_case keys and ISO 8601 dates.
struct SnakeCaseEchoAPI: API {
    var service: ServiceID { .test }
    var path: String { "/echo/profile" }
    var method: HTTPRequest.Method { .post }
    var retryPolicy: RetryPolicy { .never }
    var jsonEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}

struct Profile: Encodable, Sendable {
    var firstName: String
    var joinedAt: Date
}

@Suite("Request bodies", .timeLimit(.minutes(10)))
@MainActor
struct RequestBodyTests {
    @Test("an Encodable body is encoded with the API's encoder; params go into the query",
          arguments: TransportKind.allCases)
    func encodable(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let manager = APIManager(SnakeCaseEchoAPI(), engine: harness.engine)
            let profile = Profile(firstName: "Ada", joinedAt: Date(timeIntervalSince1970: 0))
            let echo = try await manager.load(with: ["source": "app"], body: .json(profile))
            #expect(echo.json?["body"]?.stringValue == #"{"first_name":"Ada","joined_at":"1970-01-01T00:00:00Z"}"#)
            #expect(echo.json?["headers"]?["content-type"]?.stringValue == "application/json")
            #expect(echo.json?["query"]?.stringValue == "source=app")
        }
    }

    @Test("a Data body is sent as it is, with its content type", arguments: TransportKind.allCases)
    func data(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let api = AdHocAPI(path: "/echo/note", method: .put)
            let echo = try await APIManager(api, engine: harness.engine)
                .load(body: .data(Data("plain words".utf8), contentType: "text/plain; charset=utf-8"))
            #expect(echo.json?["method"]?.stringValue == "PUT")
            #expect(echo.json?["body"]?.stringValue == "plain words")
            #expect(echo.json?["headers"]?["content-type"]?.stringValue == "text/plain; charset=utf-8")
        }
    }

    @Test("a body that cannot be encoded fails before anything is sent")
    func unencodable() async throws {
        try await withHarness { harness in
            let result = await harness.engine.perform(
                AdHocAPI(path: "/echo/x", method: .post), body: .json(["ratio": Double.nan]))
            guard case .failure(.paramsUnencodable) = result else {
                Issue.record("expected paramsUnencodable, got \(result)")
                return
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("a file that does not exist fails before anything is sent")
    func missingFile() async throws {
        try await withHarness { harness in
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent("runway-missing-\(UUID())")
            let result = await harness.engine.perform(AdHocAPI(path: "/upload/raw", method: .post), body: .file(missing))
            guard case .failure(.invalidRequest(let reason)) = result else {
                Issue.record("expected invalidRequest, got \(result)")
                return
            }
            #expect(reason.contains(missing.lastPathComponent))
            #expect(harness.probe.count("/upload/raw") == 0)
        }
    }

    @Test("a multipart form writes quotes and line breaks in names so they cannot end the header")
    func multipartEscaping() throws {
        var form = MultipartForm(boundary: "b0undary")
        form.append("v", name: "a\"b\r\nc")
        form.append(Data([1, 2]), name: "f", filename: "x\".png", contentType: "image/png")
        let body = try form.makeBody().allBytes()
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(#"name="a%22b%0D%0Ac""#))
        #expect(text.contains(#"filename="x%22.png""#))
        #expect(text.hasSuffix("--b0undary--\r\n"))
        #expect(throws: RunwayError.self) {
            _ = try MultipartForm(boundary: String(repeating: "x", count: 71)).makeBody()
        }
    }

    @Test("a file that changes size while it is sent fails the exchange instead of sending something else")
    func fileChangedWhileSent() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-grows-\(UUID())")
        try Data(repeating: 7, count: 1000).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let body = try TransportBody.file(url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 8, count: 10))
        try handle.close()
        let reader = body.makeReader()
        #expect(try reader.read(upTo: 4096)?.count == 1000)
        #expect(throws: RunwayError.self) { _ = try reader.read(upTo: 4096) }

        let shrinking = try TransportBody.file(url)
        try Data(repeating: 7, count: 5).write(to: url)
        let shortReader = shrinking.makeReader()
        #expect(try shortReader.read(upTo: 4096)?.count == 5)
        #expect(throws: RunwayError.self) { _ = try shortReader.read(upTo: 4096) }
    }
}

extension TransportBody {
    /// The whole body, read through a reader in small chunks, as a transport would.
    func allBytes() throws -> Data {
        var bytes = Data()
        let reader = makeReader()
        while let chunk = try reader.read(upTo: 7) { bytes.append(chunk) }
        return bytes
    }
}
