import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayExamples
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing
import AsyncHTTPClient
import NIOCore

@Suite("Request signing and the server's verifier", .timeLimit(.minutes(10)))
@MainActor
struct SigningTests {
    nonisolated static let secret = SymmetricKey(data: Data(repeating: 7, count: 32))
    nonisolated static let rotated = SymmetricKey(data: Data(repeating: 9, count: 32))

    /// Runs `body` against a server that verifies signatures, with an engine over `transport`.
    func withSignedServer(
        keys: [String: [SymmetricKey]] = ["ios-app": [SigningTests.secret]],
        signer: HMACSigner = HMACSigner(keyID: "ios-app", secret: SigningTests.secret),
        serverNow: @escaping @Sendable () -> Date = { Date() },
        tamper: @escaping @Sendable (inout TransportRequest) -> Void = { _ in },
        _ body: (Engine, DemoServer, Wiretap) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: keys, now: serverNow))
        let nio = AsyncHTTPClientTransport()
        let transport = Wiretap(nio, tamper: tamper)
        let engine = Engine(transport: transport)
        var service = listingService(baseURL: server.baseURL)
        service.credentials.signer = signer
        try engine.register(service)
        try engine.register(Service(id: "signed", environment: .develop, baseURLs: [.develop: server.baseURL], credentials: .init(signer: signer)))
        try await withCleanup({
            try? await nio.shutdown()
            await server.stop()
        }) {
            try await body(engine, server, transport)
        }
    }

    /// The verifier's machine-readable reason in a 401 body.
    func reason(of error: any Error) -> String? {
        guard case .httpStatus(401, let body) = error as? RunwayError else { return nil }
        return (try? JSON(parsing: body))?["reason"]?.stringValue
    }

    func echoAPI(_ method: HTTPRequest.Method = .post, path: String = "/signed/echo/orders") -> AdHocAPI {
        AdHocAPI(path: path, service: "signed", method: method)
    }

    @Test("signed GETs and POSTs round-trip through the verifier")
    func roundTrip() async throws {
        try await withSignedServer { engine, server, _ in
            let rows = try await APIManager(SecondHandListAPI(), engine: engine).load(
                with: ["city": "sh", "q": "a b+c/é"], reformedBy: ListingRowsReformer())
            #expect(rows.count == 20)
            let echo = try await APIManager(echoAPI(), engine: engine).load(with: ["amount": 12.5, "note": "多"])
            #expect(echo.status == .ok)
            #expect(server.probe.count("/listings/esf") == 1)
        }
    }

    @Test("a request without a signature is refused as missing a header")
    func unsigned() async throws {
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["ios-app": [Self.secret]]))
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio)
        try engine.register(listingService(baseURL: server.baseURL))
        do {
            _ = try await APIManager(SecondHandListAPI(), engine: engine).load()
            Issue.record("an unsigned request must be refused")
        } catch {
            #expect(reason(of: error) == "missing_header")
        }
        #expect(server.probe.count("/listings/esf") == 0)
        try await nio.shutdown()
        await server.stop()
    }

    nonisolated static let tamperings: [(String, @Sendable (inout TransportRequest) -> Void, String)] = [
        ("method", { $0.head.method = .put }, "bad_signature"),
        ("path", { $0.head.path = $0.head.path?.replacingOccurrences(of: "/orders", with: "/refunds") }, "bad_signature"),
        ("query", { $0.head.path = ($0.head.path ?? "") + "&admin=true" }, "bad_signature"),
        ("body", { $0.body = Data(#"{"amount":9999}"#.utf8) }, "body_mismatch"),
        ("declared body hash", { $0.head.headerFields[RequestSignature.Field.contentSHA256] = RequestSignature.sha256Hex(Data("x".utf8)) }, "bad_signature"),
        ("host", { $0.head.authority = $0.head.authority?.replacingOccurrences(of: "127.0.0.1", with: "localhost") }, "bad_signature"),
        ("content type", { $0.head.headerFields[.contentType] = "text/plain" }, "bad_signature"),
        ("signed header list", { $0.head.headerFields[RequestSignature.Field.signedHeaders] = "x-other" }, "malformed_request"),
        ("timestamp", { request in
            let field = RequestSignature.Field.timestamp
            request.head.headerFields[field] = String((Int(request.head.headerFields[field] ?? "") ?? 0) - 1)
        }, "bad_signature"),
        ("key id", { $0.head.headerFields[RequestSignature.Field.keyID] = "other-app" }, "unknown_key"),
        ("signature", { $0.head.headerFields[RequestSignature.Field.signature] = String(repeating: "0", count: 64) }, "bad_signature"),
    ]

    @Test("tampering with any signed part is refused with its reason", arguments: 0..<SigningTests.tamperings.count)
    func tampered(_ index: Int) async throws {
        let (part, tamper, expected) = Self.tamperings[index]
        try await withSignedServer(tamper: tamper) { engine, server, _ in
            do {
                _ = try await APIManager(echoAPI(), engine: engine).load(with: ["amount": 12])
                Issue.record("tampering with the \(part) must be refused")
            } catch {
                #expect(reason(of: error) == expected, "tampered \(part)")
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test("a replayed request is refused")
    func replay() async throws {
        try await withSignedServer { engine, server, transport in
            _ = try await APIManager(echoAPI(), engine: engine).load(with: ["amount": 1])
            var captured = try #require(transport.sent.first)
            // Sent again as it went on the wire; its body comes back here, not to the first load.
            captured.responseSink = nil
            let replayed = try await transport.inner.send(captured)
            #expect(replayed.head.status == .unauthorized)
            #expect((try? JSON(parsing: replayed.body))?["reason"] == "replayed_nonce")
            #expect(server.probe.count("/echo") == 1)
        }
    }

    @Test("a timestamp beyond the window is refused either way with the verifier's time, and the signer signs again once; within it is accepted",
          arguments: [-240, 61, -239, 60])
    func skew(_ seconds: Int) async throws {
        // Both clocks are fixed, so the skew is exactly what the test says, however slow the run.
        let serverTime = Date(timeIntervalSince1970: 1_800_000_000)
        let skewed = HMACSigner(keyID: "ios-app", secret: Self.secret, now: { serverTime.addingTimeInterval(Double(seconds)) })
        try await withSignedServer(signer: skewed, serverNow: { serverTime }) { engine, server, transport in
            _ = try await APIManager(echoAPI(), engine: engine).load()
            #expect(server.probe.count("/echo") == 1)
            // Accepted: up to 240 s behind the server (window 300 − future skew 60), 60 s ahead.
            let refused = seconds <= -240 || seconds > 60
            #expect(transport.sent.count == (refused ? 2 : 1))
            #expect(skewed.clockOffset == (refused ? Double(-seconds) : 0))
            if refused, var first = transport.sent.first {
                // What the verifier answered the first, as the signer's own parts read it.
                first.responseSink = nil
                let replayed = try await transport.inner.send(first)
                #expect(replayed.head.status == .unauthorized)
                #expect((try? JSON(parsing: replayed.body))?["reason"] == "stale_timestamp")
                #expect(RequestSignature.serverTime(ifClockSkewed: replayed.head) == serverTime)
            }
        }
    }

    @Test("during a rotation both the old and the new secret are accepted; any other is not")
    func rotation() async throws {
        let keys = ["ios-app": [Self.secret, Self.rotated]]
        for (secret, accepted) in [(Self.secret, true), (Self.rotated, true), (SymmetricKey(size: .bits256), false)] {
            try await withSignedServer(keys: keys, signer: HMACSigner(keyID: "ios-app", secret: secret)) { engine, _, _ in
                do {
                    _ = try await APIManager(echoAPI(), engine: engine).load()
                    #expect(accepted)
                } catch {
                    #expect(!accepted)
                    #expect(reason(of: error) == "bad_signature")
                }
            }
        }
    }

    @Test("the signer never shows its secret")
    func secretHidden() {
        let signer = HMACSigner(keyID: "ios-app", secret: SymmetricKey(data: Data("TOP-SECRET-BYTES-0123456789abcdef".utf8)))
        for text in [String(describing: signer), String(reflecting: signer), "\(signer)"] {
            #expect(!text.contains("TOP-SECRET"))
            #expect(text.contains("ios-app"))
        }
    }
}

@Suite("The nonce store's bounds", .timeLimit(.minutes(10)))
struct NonceStoreTests {
    @Test("a full store fails closed with 503, and expired nonces make room again")
    func bounded() async throws {
        let start = Date()
        let clock = TestBox(start)
        let verifier = SignatureVerifier<ServerRequestContext>(
            keys: ["k": [SigningTests.secret]], window: .seconds(300), nonces: MemoryNonceStore(capacity: 2),
            now: { clock.value })
        let server = try await DemoServer.start(signatureVerifier: verifier)
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio)
        var service = Service(id: "signed", environment: .develop, baseURLs: [.develop: server.baseURL])
        service.credentials.signer = HMACSigner(keyID: "k", secret: SigningTests.secret, now: { clock.value })
        try engine.register(service)
        let api = AdHocAPI(path: "/signed/echo/n", service: "signed")
        _ = try await APIManager(api, engine: engine).load()
        _ = try await APIManager(api, engine: engine).load()
        do {
            _ = try await APIManager(api, engine: engine).load()
            Issue.record("a third live nonce must be refused")
        } catch {
            guard case .httpStatus(503, let body) = error else { throw error }
            #expect((try? JSON(parsing: body))?["reason"] == "nonce_store_full")
        }
        clock.set(start.addingTimeInterval(301))
        _ = try await APIManager(api, engine: engine).load()
        try await nio.shutdown()
        await server.stop()
    }
}

@Suite("The canonical request, version 2", .timeLimit(.minutes(10)))
struct CanonicalRequestTests {
    func query(_ text: String) throws -> String { try RequestSignature.canonicalQuery(text) }

    @Test("repeated names keep their order; other pairs sort by name")
    func repeatedKeys() throws {
        #expect(try query("role=user&b=2&role=admin&a=1") == "a=1&b=2&role=user&role=admin")
        #expect(try query("role=user&role=admin") != (try query("role=admin&role=user")))
    }

    @Test("percent-encoding is decoded to bytes once: %FF and %25FF differ; spellings of one byte agree")
    func bytes() throws {
        #expect(try query("v=%FF") == "v=%FF")
        #expect(try query("v=%25FF") == "v=%25FF")
        #expect(try query("v=%7e%41") == "v=~A")
        #expect(try query("v=a:b") == (try query("v=a%3Ab")))
    }

    @Test("+ and %2B sign differently")
    func plus() throws {
        #expect(try query("q=a+b") == "q=a+b")
        #expect(try query("q=a%2Bb") == "q=a%2Bb")
    }

    @Test("invalid percent-encoding and raw bytes that must be encoded are refused")
    func invalid() {
        for text in ["v=%G1", "v=%4", "v=%", "v=a b", "v=\u{7F}", "v=é"] {
            #expect(throws: RequestSignature.FormatError.self, "\(text)") { try query(text) }
        }
    }

    @Test("scheme and authority are part of the text; default ports are dropped")
    func origin() throws {
        func text(_ scheme: String, _ authority: String) throws -> String {
            try RequestSignature.canonicalRequest(
                RequestSignature.Parts(
                    method: "GET", scheme: scheme, authority: authority, pathAndQuery: "/a?x=1",
                    signedFields: [("content-type", nil)], bodySHA256: RequestSignature.sha256Hex(nil), timestamp: 1,
                    nonce: "n", keyID: "k"))
        }
        #expect(try text("https", "API.example.com:443") == (try text("https", "api.example.com")))
        #expect(try text("https", "api.example.com") != (try text("http", "api.example.com")))
        #expect(try text("https", "api.example.com") != (try text("https", "evil.example.com")))
    }

    @Test("a signer refuses a query it cannot put in canonical form")
    func signerRefuses() throws {
        let signer = HMACSigner(keyID: "k", secret: SymmetricKey(size: .bits256))
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/a?bad=%ZZ")
        #expect(throws: RequestSignature.FormatError.self) {
            try signer.sign(&request, body: nil, context: SigningContext(apiName: "A", service: "s", attempt: 1))
        }
        #expect(request.headerFields[RequestSignature.Field.signature] == nil)
    }
}

@Suite("The verifier's cost to a caller without the key", .timeLimit(.minutes(10)))
struct VerifierStarvationTests {
    @Test("a bad signature is refused before any of the body is read", .timeLimit(.minutes(10)))
    func refusedBeforeBody() async throws {
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["k": [SigningTests.secret]]))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await withCleanup({
            try? await client.shutdown()
            await server.stop()
        }) {
            var request = HTTPClientRequest(url: "\(server.baseURL)/signed/echo/upload")
            request.method = .POST
            request.headers.add(name: "X-Runway-Key-Id", value: "k")
            request.headers.add(name: "X-Runway-Timestamp", value: String(Int(Date().timeIntervalSince1970)))
            request.headers.add(name: "X-Runway-Nonce", value: "n1")
            request.headers.add(name: "X-Runway-Content-Sha256", value: String(repeating: "a", count: 64))
            request.headers.add(name: "X-Runway-Signed-Headers", value: "content-type")
            request.headers.add(name: "X-Runway-Signature", value: String(repeating: "0", count: 64))
            // A body that sends one chunk and then never ends: a verifier that reads the body
            // before checking the signature never answers.
            let (chunks, continuation) = AsyncStream<ByteBuffer>.makeStream()
            continuation.yield(ByteBuffer(repeating: 0x41, count: 64 * 1024))
            request.body = .stream(chunks, length: .known(Int64(4 << 20)))
            let response = try await client.execute(request, timeout: .seconds(30))
            #expect(response.status.code == 401)
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect((try? JSON(parsing: Data(body.readableBytesView)))?["reason"] == "bad_signature")
            continuation.finish()
        }
    }
}

@Suite("MemoryNonceStore", .timeLimit(.minutes(10)))
struct MemoryNonceStoreTests {
    @Test("a live nonce is a replay; an expired one is forgotten; a full store says so")
    func lifecycle() {
        let store = MemoryNonceStore(capacity: 2)
        let start = Date(timeIntervalSince1970: 1_000_000)
        #expect(store.record("a", expiry: start.addingTimeInterval(10), now: start) == .fresh)
        #expect(store.record("a", expiry: start.addingTimeInterval(10), now: start.addingTimeInterval(5)) == .replayed)
        #expect(store.record("b", expiry: start.addingTimeInterval(20), now: start) == .fresh)
        #expect(store.record("c", expiry: start.addingTimeInterval(20), now: start) == .full(roomAt: start.addingTimeInterval(10)))
        // Ten seconds on, "a" has expired: room for "c", and "a" may be used again.
        #expect(store.record("c", expiry: start.addingTimeInterval(30), now: start.addingTimeInterval(11)) == .fresh)
        #expect(store.count == 2)
        // A long jump forward expires everything at once.
        #expect(store.record("d", expiry: start.addingTimeInterval(10_000), now: start.addingTimeInterval(9_000)) == .fresh)
        #expect(store.count == 1)
    }
}
