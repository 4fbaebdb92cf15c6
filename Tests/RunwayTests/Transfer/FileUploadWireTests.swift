import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// A file upload as the server sees it, over both transports.
///
/// On Linux, swift-corelibs-foundation sent an upload task's file through a `DispatchIO`
/// channel and, when a read came back after the transfer had ended, unpaused the ended curl
/// handle with a `try!` that failed: the whole process trapped (in CI, and in one of nine runs
/// of the suite here, while its uploads ran). URLSessionTransport sends a file as a body stream
/// there; these tests hold it to the framing a file upload had.
@Suite("File uploads on the wire", .timeLimit(.minutes(10)))
struct FileUploadWireTests {
    /// An engine over `kind` for a service at `baseURL`, and what shuts its transport down.
    static func engine(_ kind: TransportKind, baseURL: String) throws -> (Engine, @Sendable () async -> Void) {
        let client = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport = if let client { client } else { URLSessionTransport() }
        let engine = Engine(transport: transport)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: baseURL]))
        return (engine, { try? await client?.shutdown() })
    }

    @Test("a file goes whole with its Content-Length, never chunked, and with no content type it was not given",
          arguments: TransportKind.allCases)
    func framing(_ kind: TransportKind) async throws {
        let size = 300_000
        let (file, _) = try makeUploadFile(size)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let server = try await RawHTTPServer.start { _ in
            .init("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", afterBodyBytes: size)
        }
        let client = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport = if let client { client } else { URLSessionTransport() }
        try await withCleanup({
            await server.stop()
            try? await client?.shutdown()
        }) {
            // Straight to the transport: the engine would give the body a content type.
            for method in [HTTPRequest.Method.put, .post] {
                let head = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/file")
                let request = TransportRequest(
                    head: head, content: try TransportBody.file(file), timeout: .seconds(300), apiName: "Wire")
                #expect(try await transport.send(request).head.status == .ok)
            }
            let heads = server.heads.map { $0.lowercased().split(separator: "\r\n").map(String.init) }
            #expect(heads.count == 2)
            for lines in heads {
                #expect(lines.contains("content-length: \(size)"), "\(lines)")
                #expect(!lines.contains { $0.hasPrefix("transfer-encoding") }, "\(lines)")
                #expect(!lines.contains { $0.hasPrefix("content-type") }, "\(lines)")
            }
        }
    }

    @Test("a file upload answered 413 and closed mid-body ends as that 413 or a lost connection, every time",
          arguments: TransportKind.allCases)
    func earlyAnswer(_ kind: TransportKind) async throws {
        let (file, _) = try makeUploadFile(4 << 20)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        // The answer after the first megabyte of the body, then the connection closed.
        let server = try await RawHTTPServer.start { _ in
            .init("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", afterBodyBytes: 1 << 20)
        }
        let (engine, shutdown) = try Self.engine(kind, baseURL: server.baseURL)
        try await withCleanup({
            await server.stop()
            await shutdown()
        }) {
            var api = AdHocAPI(path: "/early", method: .put)
            api.retryPolicy = .never
            for attempt in 0..<40 {
                do {
                    _ = try await engine.upload(api, body: .file(file)).value
                    Issue.record("upload \(attempt): a success from a server that answers 413")
                } catch RunwayError.httpStatus(code: 413, body: _), RunwayError.connectionLost {
                    // The server's answer, or the connection it closed under the body.
                } catch {
                    Issue.record("upload \(attempt): \(error)")
                }
            }
        }
    }
}
