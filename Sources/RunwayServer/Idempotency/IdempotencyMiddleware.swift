import Crypto
import NIOConcurrencyHelpers
import NIOCore
import Runway
import Foundation
import HTTPTypes
public import Hummingbird

/// Honours `Idempotency-Key` (the IETF httpapi draft) on `POST`, `PUT`, `PATCH` and `DELETE`: a
/// mutation sent again after its answer was lost is answered, not applied again.
///
/// | a request with a key that… | answer |
/// |---|---|
/// | is new (or whose answer expired) | runs; a 2xx–4xx answer is kept for ``Limits/retention`` |
/// | ran, with the same method, path, query and body | the kept answer, with `Idempotent-Replayed: true` |
/// | is running now | 409 `idempotency_key_in_use`, `Retry-After: 1` |
/// | ran or runs with another request | 422 `idempotency_key_reused` |
/// | is empty, longer than ``Limits/maximumKeyLength`` or not visible ASCII | 400 `invalid_idempotency_key` |
/// | carries a body over ``Limits/maximumBodySize`` | 413 `body_too_large` |
///
/// A 5xx or a thrown error is not kept: the key is released and a repeat runs again. Keys are
/// scoped by ``scope`` (by default the request's `Authorization`), so one client's key never
/// answers another's request. A request that claimed a key and whose process was killed holds
/// it for ``Limits/lease``; then a repeat runs again — so a handler whose effect must be applied
/// exactly once even then keeps the key with its effect (the demo's order route stores it with
/// the order, in one statement).
///
/// Put it inside the ``SignatureVerifier`` (the verifier checks the body's hash as this
/// middleware reads it).
public struct IdempotencyMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Bounds of the middleware.
    public struct Limits: Sendable {
        /// The longest key accepted. Default 255.
        public var maximumKeyLength = 255
        /// The largest request body read (to fingerprint it). Default 1 MB.
        public var maximumBodySize = 1024 * 1024
        /// The largest answer body kept; a larger one is replayed with its status and header
        /// fields and no body. Default 64 KB.
        public var maximumStoredBody = 64 * 1024
        /// How long an answer is kept. Default 24 hours.
        public var retention: Duration = .seconds(86_400)
        /// How long a running request holds its key. Default 60 s.
        public var lease: Duration = .seconds(60)

        /// The defaults.
        public init() {}
    }

    /// Why a request was refused, as the answer's `reason`.
    public enum Reason: String, Sendable {
        case invalidKey = "invalid_idempotency_key"
        case keyInUse = "idempotency_key_in_use"
        case keyReused = "idempotency_key_reused"
        case bodyTooLarge = "body_too_large"
    }

    let store: any IdempotencyStore
    let limits: Limits
    let scope: @Sendable (Request, Context) -> String
    let sweeps = SweepTicket()

    /// Keys kept in `store`, scoped by `scope` (default: the request's `Authorization`).
    public init(
        store: any IdempotencyStore, limits: Limits = Limits(),
        scope: @escaping @Sendable (Request, Context) -> String = { request, _ in request.headers[.authorization] ?? "" }
    ) {
        self.store = store
        self.limits = limits
        self.scope = scope
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard [.post, .put, .patch, .delete].contains(request.method),
            let key = request.headers[.idempotencyKey]
        else { return try await next(request, context) }
        guard (1...max(limits.maximumKeyLength, 1)).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return Self.refuse(.invalidKey, status: .badRequest) }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limits.maximumBodySize)
        } catch is NIOTooManyBytesError {
            return Self.refuse(.bodyTooLarge, status: .contentTooLarge)
        }
        let storeKey = Self.hex(SHA256.hash(data: Data((scope(request, context) + "\u{0}" + key).utf8)))
        var hasher = SHA256()
        hasher.update(data: Data("\(request.method.rawValue)\n\(request.uri.description)\n".utf8))
        hasher.update(data: Data(body.readableBytesView))
        let fingerprint = Self.hex(hasher.finalize())
        let now = Self.nowMilliseconds()
        if sweeps.take() {
            _ = try? await store.sweep(now: now, limit: 100)
        }
        switch try await store.claim(
            storeKey, fingerprint: fingerprint, now: now, leaseUntil: now + Self.milliseconds(limits.lease))
        {
        case .running:
            var response = Self.refuse(.keyInUse, status: .conflict)
            response.headers[.retryAfter] = "1"
            return response
        case .mismatch:
            return Self.refuse(.keyReused, status: .unprocessableContent)
        case .answered(let answer) where !answer.hasValidStatus:
            // A store's answer no HTTP answer can be: unreadable, as a built-in store reports one.
            return Self.refuse(.keyReused, status: .unprocessableContent)
        case .answered(let answer):
            var response = Self.response(answer)
            response.headers[.idempotentReplayed] = "true"
            return response
        case .claimed:
            break
        }
        var forwarded = request
        forwarded.body = RequestBody(buffer: body)
        let response: Response
        do {
            response = try await next(forwarded, context)
        } catch {
            try? await store.release(storeKey)
            throw error
        }
        guard response.status.code < 500 else {
            try? await store.release(storeKey)
            return response
        }
        let collector = BodyCollector()
        var head = response
        do {
            try await response.body.write(CollectingWriter(collector: collector))
        } catch {
            try? await store.release(storeKey)
            throw error
        }
        let bytes = collector.bytes
        let headers = response.headers.filter { ![.contentLength, .date, .transferEncoding, .connection].contains($0.name) }
        let answer = StoredAnswer(
            status: response.status.code, headers: headers.map { [$0.name.rawName, $0.value] },
            body: bytes.count <= limits.maximumStoredBody ? Data(bytes) : nil)
        try await store.complete(storeKey, answer: answer, expiry: now + Self.milliseconds(limits.retention))
        head.body = ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        return head
    }

    static func response(_ answer: StoredAnswer) -> Response {
        var fields = HTTPFields()
        for pair in answer.headers where pair.count == 2 {
            if let name = HTTPField.Name(pair[0]) { fields.append(HTTPField(name: name, value: pair[1])) }
        }
        let status = HTTPResponse.Status(code: answer.status)
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body ?? Data())))
    }

    static func refuse(_ reason: Reason, status: HTTPResponse.Status) -> Response {
        JSONResponse.make(["code": status.code, "reason": reason.rawValue], status: status)
    }

    /// Who sent `request`, as its keys are scoped: a digest of the scope (never the credential
    /// itself), for a handler that keeps the key with its effect and must not find another
    /// client's under the same key.
    public func client(of request: Request, context: Context) -> String {
        Self.hex(SHA256.hash(data: Data(scope(request, context).utf8)))
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// Every 64th request sweeps expired answers: the store stays bounded by the retention without a
/// timer of its own.
final class SweepTicket: Sendable {
    private let count = NIOLockedValueBox(0)

    func take() -> Bool {
        count.withLockedValue { count in
            count &+= 1
            return count % 64 == 1
        }
    }
}
