import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// `IdempotencyMiddleware` over real HTTP, in front of the demo's order route, with a ledger
/// that the test holds at its `apply` to make "a repeat while the first runs" certain.
@Suite("Idempotency-Key on the server", .timeLimit(.minutes(10)))
struct IdempotencyMiddlewareTests {
    /// Orders kept in memory, one per client and key; an order whose position is 99 waits at
    /// `apply` for the test, and a position of 500 fails (a 500) once.
    final class GatedLedger: OrderLedger {
        let entered = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let state = TestBox<(orders: [(client: String, order: AppliedOrder)], failed: Bool)>(([], false))

        func apply(client: String, key: String, queue: String, position: Int64) async throws -> (number: Int64, applied: Bool) {
            if position == 99 {
                entered.continuation.yield()
                var iterator = release.stream.makeAsyncIterator()
                _ = await iterator.next()
            }
            if position == 500, state.mutate({ state in
                defer { state.failed = true }
                return !state.failed
            }) {
                throw ApplyFailed()
            }
            return state.mutate { state in
                if let known = state.orders.first(where: { $0.client == client && $0.order.key == key }) {
                    return (known.order.number, false)
                }
                let number = Int64(state.orders.count + 1)
                state.orders.append((client, AppliedOrder(number: number, key: key, queue: queue, position: position)))
                return (number, true)
            }
        }

        func orders() async throws -> [AppliedOrder] { state.value.orders.map(\.order) }
    }

    struct ApplyFailed: Error {}

    struct Answer {
        var status: Int
        var headers: HTTPFields
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
    }

    static func post(
        _ client: HTTPClient, _ baseURL: String, key: String?, body: String, method: HTTPMethod = .POST,
        authorization: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + "/orders")
        request.method = method
        if let key { request.headers.add(name: "Idempotency-Key", value: key) }
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(300))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        var fields = HTTPFields()
        for header in response.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return Answer(status: Int(response.status.code), headers: fields, body: String(buffer: bytes))
    }

    static func withOrders<T>(
        ledger: GatedLedger = GatedLedger(), limits: IdempotencyMiddleware<ServerRequestContext>.Limits = .init(),
        keys: (any IdempotencyStore)? = nil, _ body: (HTTPClient, String, GatedLedger) async throws -> T
    ) async throws -> T {
        let folder = try ScratchFolder("keys")
        let desk = OrderDesk(ledger: ledger, keys: try keys ?? SQLiteIdempotencyStore(url: folder.file("keys.sqlite")), limits: limits)
        let server = try await DemoServer.start(demoRoutes: false, orders: desk)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        return try await withCleanup({
            try? await client.shutdown()
            await server.stop()
            folder.remove()
        }) {
            try await body(client, server.baseURL, ledger)
        }
    }

    @Test("The first request runs; the same request again gets the kept answer, marked replayed; another body is 422")
    func replaysAndRefusesAnotherBody() async throws {
        try await Self.withOrders { client, base, ledger in
            let first = try await Self.post(client, base, key: "order-1", body: #"{"queue":"q","position":1}"#)
            #expect(first.status == 201 && first.json["applied"] as? Bool == true)
            #expect(first.headers[.idempotentReplayed] == nil)
            let again = try await Self.post(client, base, key: "order-1", body: #"{"queue":"q","position":1}"#)
            #expect(again.status == 201 && again.body == first.body)
            #expect(again.headers[.idempotentReplayed] == "true")
            #expect(again.headers[.contentType] == "application/json; charset=utf-8")
            let other = try await Self.post(client, base, key: "order-1", body: #"{"queue":"q","position":2}"#)
            #expect(other.status == 422 && other.json["reason"] as? String == "idempotency_key_reused")
            // Another client's same key is another key: run and applied, not refused, replayed or
            // answered with the first client's order.
            let theirs = try await Self.post(
                client, base, key: "order-1", body: #"{"queue":"q","position":2}"#, authorization: "Bearer someone-else")
            #expect(theirs.status == 201 && theirs.headers[.idempotentReplayed] == nil)
            #expect(theirs.json["applied"] as? Bool == true && theirs.json["number"] as? Int == 2)
            #expect(try await ledger.orders().count == 2)
        }
    }

    @Test("A repeat while the first request runs is 409 with Retry-After; after it, the kept answer")
    func conflictWhileRunning() async throws {
        try await Self.withOrders { client, base, ledger in
            let first = Task { try await Self.post(client, base, key: "slow", body: #"{"queue":"q","position":99}"#) }
            var entered = ledger.entered.stream.makeAsyncIterator()
            _ = await entered.next()
            let during = try await Self.post(client, base, key: "slow", body: #"{"queue":"q","position":99}"#)
            #expect(during.status == 409 && during.json["reason"] as? String == "idempotency_key_in_use")
            #expect(during.headers[.retryAfter] == "1")
            ledger.release.continuation.yield()
            let answered = try await first.value
            #expect(answered.status == 201)
            let after = try await Self.post(client, base, key: "slow", body: #"{"queue":"q","position":99}"#)
            #expect(after.body == answered.body && after.headers[.idempotentReplayed] == "true")
            #expect(try await ledger.orders().count == 1)
        }
    }

    /// A store whose every key holds an answer with `status`: a damaged row, or a store of an
    /// app's own that keeps what it should not.
    struct OddAnswers: IdempotencyStore {
        var status: Int
        func claim(_ key: String, fingerprint: String, now: Int64, leaseUntil: Int64) async throws -> IdempotencyClaim {
            .answered(StoredAnswer(status: status, headers: [], body: Data("{}".utf8)))
        }
        func complete(_ key: String, answer: StoredAnswer, expiry: Int64) async throws {}
        func release(_ key: String) async throws {}
        func sweep(now: Int64, limit: Int) async throws -> Int { 0 }
    }

    @Test("A kept answer whose status no HTTP answer has is refused as unreadable (422), never made a response", arguments: [0, 99, 1000, -1, Int.max])
    func keptStatusOutOfRange(status: Int) async throws {
        // Before, replaying it stopped the server's process (HTTPTypes' precondition on a status).
        try await Self.withOrders(keys: OddAnswers(status: status)) { client, base, _ in
            let replay = try await Self.post(client, base, key: "odd", body: #"{"queue":"q","position":1}"#)
            #expect(replay.status == 422 && replay.json["reason"] as? String == "idempotency_key_reused")
            #expect(replay.headers[.idempotentReplayed] == nil)
        }
        let row = Data(#"{"status":\#(status),"headers":[],"body":null}"#.utf8)
        #expect(StoredAnswer.decoded(row) == nil, "a built-in store reads the row as no answer")
        #expect(StoredAnswer.decoded(Data(#"{"status":201,"headers":[]}"#.utf8))?.status == 201)
    }

    @Test("A 5xx is not kept: the repeat runs again")
    func serverErrorIsNotKept() async throws {
        try await Self.withOrders { client, base, ledger in
            let failed = try await Self.post(client, base, key: "flaky", body: #"{"queue":"q","position":500}"#)
            #expect(failed.status == 500)
            let retried = try await Self.post(client, base, key: "flaky", body: #"{"queue":"q","position":500}"#)
            #expect(retried.status == 201 && retried.headers[.idempotentReplayed] == nil)
            #expect(try await ledger.orders().count == 1)
        }
    }

    @Test("Bounds: a bad key is 400, a large body 413, a large answer replayed without its body; GET passes through")
    func bounds() async throws {
        var limits = IdempotencyMiddleware<ServerRequestContext>.Limits()
        limits.maximumStoredBody = 8
        limits.maximumBodySize = 1024
        limits.maximumKeyLength = 16
        try await Self.withOrders(limits: limits) { client, base, ledger in
            for key in ["", String(repeating: "k", count: 17), "with space", "naïve"] {
                let refused = try await Self.post(client, base, key: key, body: #"{"queue":"q","position":1}"#)
                #expect(refused.status == 400 && refused.json["reason"] as? String == "invalid_idempotency_key", "\(key)")
            }
            let large = try await Self.post(client, base, key: "big", body: String(repeating: " ", count: 2048) + "{}")
            #expect(large.status == 413 && large.json["reason"] as? String == "body_too_large")
            let first = try await Self.post(client, base, key: "small", body: #"{"queue":"q","position":1}"#)
            #expect(first.status == 201 && first.body.count > 8)
            let replay = try await Self.post(client, base, key: "small", body: #"{"queue":"q","position":1}"#)
            #expect(replay.status == 201 && replay.body.isEmpty)
            #expect(replay.headers[.idempotentReplayed] == "true")
            let listing = try await Self.post(client, base, key: "ignored", body: "", method: .GET)
            #expect(listing.status == 200 && listing.json["count"] as? Int == 1)
            #expect(try await ledger.orders().count == 1)
        }
    }
}
