import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing


/// The key the signers and the verifiers of these tests share.
private let signingSecret = SymmetricKey(data: Data(repeating: 7, count: 32))

/// What a caller holding the key (every installed app holds one) can make the verifier hold:
/// fields past their limits are refused before anything is remembered, a nonce lives at most
/// its window whatever timestamp it came with, and a full store says truly when room frees.
@Suite("Nonce and field limits", .timeLimit(.minutes(10)))
struct NonceLimitTests {
    /// A `GET /signed/echo/limits` signed with `secret` at `timestamp`, then changed by `edit`
    /// (a field made too long), sent raw.
    static func send(
        to server: DemoServer, timestamp: Date, nonce: String = UUID().uuidString, edit: (inout HTTPFields) -> Void = { _ in }
    ) async throws -> CollectorTests.Answer {
        try await send(
            to: server, signer: HMACSigner(keyID: "k", secret: signingSecret, now: { timestamp }, nonce: { nonce }), edit: edit)
    }

    /// A `GET /signed/echo/limits` with `fields`, signed by `signer`, then changed by `edit`, sent raw.
    static func send(
        to server: DemoServer, signer: HMACSigner, fields: HTTPFields = [:], edit: (inout HTTPFields) -> Void = { _ in }
    ) async throws -> CollectorTests.Answer {
        var head = HTTPRequest(
            method: .get, scheme: "http", authority: server.baseURL.replacingOccurrences(of: "http://", with: ""),
            path: "/signed/echo/limits")
        head.headerFields = fields
        head.headerFields[.contentType] = "application/json"
        try signer.sign(&head, body: nil, context: SigningContext(apiName: "raw", service: "signed", attempt: 1))
        edit(&head.headerFields)
        var request = HTTPClientRequest(url: server.baseURL + "/signed/echo/limits")
        for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return CollectorTests.Answer(
            status: Int(response.status.code), json: try? JSON(parsing: Data(buffer: bytes)),
            retryAfter: response.headers.first(name: "retry-after"))
    }

    @Test("A 60 KB nonce, a long key id or an 9 KB signed field is refused with 431 before the store sees it")
    func longFieldsAreRefusedFirst() async throws {
        let store = MemoryNonceStore(capacity: 10)
        let now = Date()
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["k": [signingSecret]], nonces: store, now: { now })
        let server = try await DemoServer.start(signatureVerifier: verifier)
        try await withCleanup({ await server.stop() }) {
            let long = String(repeating: "n", count: 60 * 1024)
            let nonce = try await Self.send(to: server, timestamp: now) { $0[RequestSignature.Field.nonce] = long }
            #expect(nonce.status == 431 && nonce.reason == "field_too_large")
            #expect(nonce.json?["header"]?.stringValue == "x-runway-nonce")
            let keyID = try await Self.send(to: server, timestamp: now) {
                $0[RequestSignature.Field.keyID] = String(repeating: "k", count: 129)
            }
            #expect(keyID.status == 431 && keyID.json?["header"]?.stringValue == "x-runway-key-id")
            let field = try await Self.send(to: server, timestamp: now) {
                $0[RequestSignature.Field.signedHeaders] = "content-type;x-big"
                $0[HTTPField.Name("X-Big")!] = String(repeating: "b", count: 8_193)
            }
            #expect(field.status == 431 && field.json?["header"]?.stringValue == "x-big")
            #expect(store.count == 0, "nothing was remembered")
            // At the limit, it passes.
            let edge = try await Self.send(to: server, timestamp: now, nonce: String(repeating: "e", count: 128))
            #expect(edge.status == 200)
            #expect(store.count == 1)
        }
    }

    @Test("The signer refuses to make a nonce the verifier would refuse: a typed error, nothing sent")
    func signerKeepsToTheLimits() async throws {
        let server = try await DemoServer.start(
            signatureVerifier: SignatureVerifier<ServerRequestContext>(keys: ["k": [signingSecret]]))
        let nio = AsyncHTTPClientTransport()
        try await withCleanup({
            try? await nio.shutdown()
            await server.stop()
        }) {
            let engine = Engine(transport: nio)
            var service = Service(id: "signed", environment: .develop, baseURLs: [.develop: server.baseURL])
            service.credentials.signer = HMACSigner(keyID: "k", secret: signingSecret, nonce: { String(repeating: "x", count: 129) })
            try engine.register(service)
            let result = await engine.perform(AdHocAPI(path: "/signed/echo/n", service: "signed"), params: [:])
            #expect(throws: RunwayError.invalidRequest(reason: "signing failed: the nonce is longer than 128 bytes")) {
                try result.get()
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test("A nonce lives at most its window: future timestamps are bounded, and Retry-After is the true time until room")
    func windowBoundsTheNonce() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = TestBox(start)
        let verifier = SignatureVerifier<ServerRequestContext>(
            keys: ["k": [signingSecret]], window: .seconds(300), futureSkew: .seconds(60),
            nonces: MemoryNonceStore(capacity: 2), now: { clock.value })
        let server = try await DemoServer.start(signatureVerifier: verifier)
        try await withCleanup({ await server.stop() }) {
            // The furthest future a timestamp may be: 60 s ahead. Two of them fill the store.
            let ahead = start.addingTimeInterval(60)
            #expect(try await Self.send(to: server, timestamp: ahead, nonce: "first").status == 200)
            #expect(try await Self.send(to: server, timestamp: ahead, nonce: "second").status == 200)
            let full = try await Self.send(to: server, timestamp: start)
            #expect(full.status == 503 && full.reason == "nonce_store_full")
            #expect(full.retryAfter == "300", "room frees when the first nonces expire, 300 s from now")
            // Beyond the bounds on either side: stale, remembered nowhere.
            #expect(try await Self.send(to: server, timestamp: start.addingTimeInterval(61)).reason == "stale_timestamp")
            #expect(try await Self.send(to: server, timestamp: start.addingTimeInterval(-240)).reason == "stale_timestamp")
            // A second before: still full, and "first" is still a replay.
            clock.set(start.addingTimeInterval(299))
            #expect(try await Self.send(to: server, timestamp: ahead, nonce: "first").reason == "replayed_nonce")
            #expect(try await Self.send(to: server, timestamp: clock.value).retryAfter == "1")
            // When Retry-After said: "first" can no longer be replayed (too old), and there is room.
            clock.set(start.addingTimeInterval(300))
            #expect(try await Self.send(to: server, timestamp: ahead, nonce: "first").reason == "stale_timestamp")
            #expect(try await Self.send(to: server, timestamp: clock.value).status == 200)
        }
    }

    @Test("Capacity is a function of the request rate: rate × window with a quarter to spare, held indefinitely")
    func capacityFollowsTheRate() {
        #expect(MemoryNonceStore().capacity == 750_000, "2,000 signed requests a second over 300 s")
        #expect(MemoryNonceStore.capacity(forRequestsPerSecond: 50, window: .seconds(20)) == 1_250)
        // 50 requests a second, each nonce kept its whole window, for five windows: never full.
        let store = MemoryNonceStore(capacity: MemoryNonceStore.capacity(forRequestsPerSecond: 50, window: .seconds(20)))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var refused = 0
        for index in 0..<(50 * 100) {
            let now = start.addingTimeInterval(Double(index) / 50)
            if store.record("steady-\(index)", expiry: now.addingTimeInterval(20), now: now) != .fresh { refused += 1 }
        }
        #expect(refused == 0)
        #expect(store.count <= 50 * 21)
        // Twice the rate it was sized for fills it.
        let small = MemoryNonceStore(capacity: MemoryNonceStore.capacity(forRequestsPerSecond: 50, window: .seconds(20)))
        var full = 0
        for index in 0..<(100 * 40) {
            let now = start.addingTimeInterval(Double(index) / 100)
            if case .full = small.record("burst-\(index)", expiry: now.addingTimeInterval(20), now: now) { full += 1 }
        }
        #expect(full > 0)
    }
}
