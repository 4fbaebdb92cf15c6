import Foundation
import HTTPTypes
import NIOSSL
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The one set of behaviours every transport must show, run against each over real HTTP.
@Suite("Transport conformance", .timeLimit(.minutes(10)))
struct TransportConformanceTests {
    /// Runs `body` with a server and a fresh transport of `kind`, shutting both down after.
    func withTransport(
        _ kind: TransportKind, _ body: (any Transport, DemoServer) async throws -> Void
    ) async throws {
        try await withServer(kind, body)
    }

    func request(
        _ server: DemoServer, _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: Data? = nil,
        timeout: Duration = .seconds(300)
    ) -> TransportRequest {
        TransportRequest(
            head: HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path, headerFields: headers),
            body: body, timeout: timeout, apiName: "Conformance")
    }

    func json(_ response: TransportResponse) throws -> JSON {
        try #require(try? JSONParser.parse(response.body))
    }

    @Test("methods, path, query and body arrive as sent", arguments: TransportKind.allCases, [HTTPRequest.Method.get, .post, .put, .delete, .patch])
    func methodsAndBodies(_ kind: TransportKind, _ method: HTTPRequest.Method) async throws {
        try await withTransport(kind) { transport, server in
            let hasBody = method != .get && method != .delete
            var headers: HTTPFields = [:]
            if hasBody { headers[.contentType] = "application/json" }
            let response = try await transport.send(
                request(server, method, "/echo/a%20b?x=1&y=%E6%96%B0", headers: headers, body: hasBody ? Data(#"{"k":"v"}"#.utf8) : nil))
            #expect(response.head.status == .ok)
            let echo = try json(response)
            #expect(echo["method"]?.stringValue == method.rawValue)
            #expect(echo["path"] == "/echo/a%20b")
            #expect(echo["query"] == "x=1&y=%E6%96%B0")
            #expect(echo["body"]?.stringValue == (hasBody ? #"{"k":"v"}"# : ""))
        }
    }

    @Test("request header fields reach the server and response header fields come back", arguments: TransportKind.allCases)
    func headers(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            var headers: HTTPFields = [:]
            headers[.init("X-Runway-Test")!] = "1"
            headers[.authorization] = "Bearer abc"
            let response = try await transport.send(request(server, .get, "/echo/h", headers: headers))
            let echo = try json(response)
            #expect(echo["headers"]?["x-runway-test"] == "1")
            #expect(echo["headers"]?["authorization"] == "Bearer abc")
            #expect(response.head.headerFields[.contentType]?.hasPrefix("application/json") == true)
        }
    }

    @Test("gzip bodies are decoded, and the wire's encoding is not passed on", arguments: TransportKind.allCases)
    func gzip(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            var headers: HTTPFields = [:]
            headers[.acceptEncoding] = "gzip"
            let response = try await transport.send(request(server, .get, "/faults/gzip", headers: headers))
            #expect(response.head.headerFields[.contentEncoding] == nil)
            let expected = Int(response.head.headerFields[.init("X-Uncompressed-Length")!] ?? "")
            #expect(expected != nil, "the server must have sent the gzip variant")
            #expect(response.body.count == expected)
            #expect(try json(response)["items"]?.arrayValue?.count == 200)
        }
    }

    @Test("a status outside 2xx is a response, not a transport error", arguments: TransportKind.allCases)
    func statusIsResponse(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            let response = try await transport.send(request(server, .get, "/faults/status/503"))
            #expect(response.head.status.code == 503)
            #expect(String(decoding: response.body, as: UTF8.self).contains("<html>"))
        }
    }

    @Test("a large body arrives whole", arguments: TransportKind.allCases)
    func largeBody(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            let payload = Data(String(repeating: "0123456789", count: 100_000).utf8)
            // A generous deadline: this test is about the bytes, and the suite's transfer tests
            // may hold the two cores for a moment.
            let response = try await transport.send(
                request(server, .post, "/echo/large", body: payload, timeout: .seconds(60)))
            #expect(try json(response)["body"]?.stringValue?.utf8.count == payload.count)
        }
    }

    @Test("many exchanges in flight each get their own answer, whole and in order", arguments: TransportKind.allCases)
    func manyInFlight(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            // Bodies of 20–59 KB, each its own length and letters, arrive in several chunks each
            // with every exchange's chunks interleaved on the transport's queues: each answer
            // must be its own request's, whole.
            let count = 40
            /// Exchange `n`'s body: its own length, its own letters.
            @Sendable func payload(_ n: Int) -> [UInt8] {
                (0..<(20_000 + n * 1_000)).map { UInt8(ascii: "a") + UInt8(($0 + n) % 26) }
            }
            let answers = try await withThrowingTaskGroup(of: (Int, JSON).self) { group in
                for n in 0..<count {
                    let sent = request(server, .post, "/echo/n\(n)", body: Data(payload(n)))
                    group.addTask { (n, try self.json(try await transport.send(sent))) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == count)
            for (n, echo) in answers {
                #expect(echo["path"]?.stringValue == "/echo/n\(n)")
                #expect(echo["body"]?.stringValue == String(decoding: payload(n), as: UTF8.self), "exchange \(n)")
            }
        }
    }

    @Test("cancelling the task cancels the request on the wire", arguments: TransportKind.allCases)
    func cancellation(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            let pending = request(server, .get, "/faults/hang", timeout: .seconds(60))
            let task = Task { try await transport.send(pending) }
            await server.probe.wait(for: .holdStarted)
            task.cancel()
            await #expect(throws: RunwayError.cancelled) { try await task.value }
            await server.probe.wait(for: .holdClosed)
        }
    }

    @Test("a body that breaks off before its promised length is a lost connection", arguments: TransportKind.allCases)
    func bodyBreaksOff(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            await #expect(throws: RunwayError.connectionLost) {
                try await transport.send(request(server, .get, "/faults/drop?key=conformance-\(kind)&failures=1"))
            }
        }
    }

    @Test("HEAD and 204 answers arrive with no body", arguments: TransportKind.allCases)
    func bodyless(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport, server in
            let head = try await transport.send(request(server, .head, "/faults/no-content"))
            #expect(head.head.status == .ok)
            #expect(head.body.isEmpty)
            #expect(head.head.headerFields[HTTPField.Name("X-Resource-Version")!] == "7")
            let deleted = try await transport.send(request(server, .delete, "/faults/no-content"))
            #expect(deleted.head.status == .noContent)
            #expect(deleted.body.isEmpty)
        }
    }

    @Test("a refused connection is reported as no network (refused)", arguments: TransportKind.allCases)
    func refused(_ kind: TransportKind) async throws {
        let nothingListens = try LoopbackSocket()
        defer { nothingListens.close() }
        try await withTransport(kind) { transport, _ in
            let refused = TransportRequest(
                head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(nothingListens.port)", path: "/echo/x"),
                body: nil, timeout: .seconds(300), apiName: "Conformance")
            await #expect(throws: RunwayError.noNetwork(reason: .connectionRefused)) {
                try await transport.send(refused)
            }
        }
    }
}

@Suite("AsyncHTTPClient transport over TLS", .timeLimit(.minutes(10)))
struct AsyncHTTPClientTLSTests {
    @Test("HTTPS to a server with a certificate made at test time negotiates HTTP/2 and multiplexes")
    func http2() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await DemoServer.start(tls: try authority.serverIdentity())
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            let responses = try await withThrowingTaskGroup(of: TransportResponse.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await transport.send(TransportRequest(
                            head: HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/echo/h2?i=\(index)"),
                            body: nil, timeout: .seconds(300), apiName: "H2"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 20)
            #expect(responses.allSatisfy { $0.httpVersion == "HTTP/2" && $0.head.status == .ok })
            #expect(server.probe.count("/echo") == 20)
        }
    }

    @Test("a certificate from an authority the client does not trust is refused")
    func untrusted() async throws {
        let trusted = try TestCertificateAuthority(commonName: "Trusted")
        let other = try TestCertificateAuthority(commonName: "Other")
        let server = try await DemoServer.start(tls: try other.serverIdentity())
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try trusted.rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        await #expect {
            try await transport.send(TransportRequest(
                head: HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/echo/x"),
                body: nil, timeout: .seconds(300), apiName: "TLS"))
        } throws: { error in
            guard case .tlsFailure = error as? RunwayError else { return false }
            return true
        }
        #expect(server.probe.count("/echo") == 0)
        try await transport.shutdown()
        await server.stop()
    }
}

import RunwayExamples
@testable import struct Runway.JSONParser
