public import Crypto
import Foundation
import Tracing
import HTTPTypes
public import Hummingbird
import Runway

/// Hummingbird middleware that admits only requests signed by `HMACSigner` with a known
/// key: the server half of Runway's request signing.
///
/// It recomputes the canonical request (`RequestSignature`) from what actually arrived —
/// method, scheme, authority, path, query, the signed header fields, the declared body hash — and
/// compares signatures in constant time **before reading any of the body**, so a caller without
/// the key cannot make the server buffer anything. The body is then hashed as it streams to the
/// route; if it does not match the declared hash, reading it fails with 401 before the route
/// sees its end. It refuses, with a machine-readable `reason`:
///
/// | status | reason | when |
/// |---|---|---|
/// | 401 | `missing_header` | a signature header field is absent (`header` names it) |
/// | 401 | `unknown_key` | the key id is not configured |
/// | 431 | `field_too_large` | a signature field is longer than `RequestSignature.Limits` allow, or a signed header field is (`header` names it); checked first, before anything is computed or remembered |
/// | 401 | `stale_timestamp` | the timestamp is `window − futureSkew` or more behind the server's clock or more than `futureSkew` ahead of it; the answer's `WWW-Authenticate` carries `RequestSignature.clockSkewError` and the verifier's time (`server_time`), so the client corrects its clock instead of signing in again |
/// | 401 | `malformed_request` | the query is not validly percent-encoded, or `content-type` is not signed |
/// | 401 | `bad_signature` | no active secret of the key produces the signature |
/// | 401 | `replayed_nonce` | the nonce was already used within the window |
/// | 401 | `body_mismatch` | the body does not hash to the signed `X-Runway-Content-Sha256` |
/// | 413 | `body_too_large` | the body is larger than `maximumBodySize` |
/// | 503 | `nonce_store_full` | the nonce store cannot remember one more (fails closed; `Retry-After` is the time until the earliest nonce expires) |
/// | 429 | `nonce_quota_exceeded` | the request's key, or its device, already holds its ``NonceQuota`` of the store (`level` says which; `Retry-After` is the time until its earliest nonce expires): one client's flood is refused while everyone else's requests pass |
///
/// A nonce is remembered until its timestamp is too old to be accepted: at most `window` from
/// when it arrived, however its timestamp was chosen, so a store sized for `window`
/// (``MemoryNonceStore/capacity(forRequestsPerSecond:window:)``) holds steady traffic.
///
/// A request names its device in a signed `X-Runway-Device` field (``deviceField``), when the
/// app signs one (`HMACSigner(signedHeaderFields: [.init("X-Runway-Device")!])`); the store's
/// quota per device then applies to it. An unsigned device field is ignored: anyone could vary it.
///
/// Several secrets can be active per key id at once, so a secret can be rotated without a gap.
/// Several verifier processes behind one load balancer must share one ``NonceStore``.
///
/// The scheme a client signed is the one it used; behind a TLS-terminating proxy the server sees
/// plain HTTP, so pass `scheme: "https"`. The authority is the request's `Host` (or `:authority`).
public struct SignatureVerifier<Context: RequestContext>: RouterMiddleware {
    /// Why a request was refused.
    public enum Reason: String, Sendable, CaseIterable {
        case missingHeader = "missing_header"
        case unknownKey = "unknown_key"
        case staleTimestamp = "stale_timestamp"
        case malformedRequest = "malformed_request"
        case badSignature = "bad_signature"
        case replayedNonce = "replayed_nonce"
        case bodyMismatch = "body_mismatch"
        case bodyTooLarge = "body_too_large"
        case nonceStoreFull = "nonce_store_full"
        case fieldTooLarge = "field_too_large"
        case nonceQuotaExceeded = "nonce_quota_exceeded"
    }

    /// The signed header field a request names its device in, for the nonce store's quota per
    /// device: `X-Runway-Device`.
    public static var deviceField: HTTPField.Name { HTTPField.Name("X-Runway-Device") ?? .contentType }

    private let keys: [String: [SymmetricKey]]
    private let window: TimeInterval
    private let futureSkew: TimeInterval
    private let now: @Sendable () -> Date
    private let nonces: any NonceStore
    private let maximumBodySize: Int
    private let scheme: String?
    private let metrics: ServerMetrics?

    /// Creates the verifier.
    ///
    /// - parameters:
    ///   - keys: The active secrets of each key id (several during a rotation).
    ///   - window: The span of timestamps accepted, and the longest a nonce is remembered.
    ///     Default 300 s.
    ///   - futureSkew: How far ahead of the server's clock a timestamp may be (the rest of the
    ///     window is behind it). Default 60 s; at most `window`.
    ///   - nonces: Where nonces are remembered; by default one in-memory store sized for 2,000
    ///     signed requests a second over 300 s.
    ///   - maximumBodySize: The largest body a verified request may stream.
    ///   - scheme: The scheme clients use to reach this server; `nil` takes the request's own
    ///     (`http` when it has none).
    ///   - metrics: Counts each refusal by reason, and the in-memory nonce store's fill
    ///     (``ServerMetrics``); `nil` counts nothing.
    ///   - now: The server's clock; replace it in tests.
    public init(
        keys: [String: [SymmetricKey]], window: Duration = .seconds(300), futureSkew: Duration = .seconds(60),
        nonces: any NonceStore = MemoryNonceStore(), maximumBodySize: Int = 4 << 20, scheme: String? = nil,
        metrics: ServerMetrics? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.metrics = metrics
        self.keys = keys
        self.window = max(Double(window.components.seconds), 1)
        self.futureSkew = min(max(Double(futureSkew.components.seconds), 0), self.window)
        self.now = now
        self.nonces = nonces
        self.maximumBodySize = maximumBodySize
        self.scheme = scheme
        // The store's gauges exist from the start, as every other family.
        if let metrics, let fill = nonces.fill { metrics.nonceStore(entries: fill.entries, capacity: fill.capacity) }
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let tracer = InstrumentationSystem.tracer
        guard metrics != nil || !(tracer is NoOpTracer) else { return try await verify(request, context: context, next: next) }
        // The check is a span of its own under the request's (Hummingbird's tracing middleware):
        // it ends when the request is admitted or refused, before the route runs.
        let check = VerifierRefusal(span: tracer is NoOpTracer ? nil : tracer.startAnySpan("verify signature"))
        check.span?.attributes["runway.verifier.key_id"] = request.headers[RequestSignature.Field.keyID].map { String($0.prefix(64)) }
        let response = try await VerifierRefusal.$current.withValue(check) {
            try await verify(request, context: context, next: next)
        }
        check.end()
        if let metrics {
            if let reason = check.reason { metrics.verifierRefused(reason) }
            if let fill = nonces.fill { metrics.nonceStore(entries: fill.entries, capacity: fill.capacity) }
        }
        return response
    }

    private func verify(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let fields = RequestSignature.Field.self
        for name in fields.all where request.headers[name] == nil {
            return Self.refuse(.missingHeader, detail: ["header": name.canonicalName])
        }
        // Lengths first: nothing is computed or remembered for a field past its limit.
        for (name, limit) in SignatureFieldLimits.all where (request.headers[values: name].first?.utf8.count ?? 0) > limit {
            return Self.tooLarge(name.canonicalName)
        }
        let keyID = request.headers[fields.keyID] ?? ""
        let nonce = request.headers[fields.nonce] ?? ""
        guard let secrets = keys[keyID] else { return Self.refuse(.unknownKey) }
        let clock = now()
        // Accepted: from `window − futureSkew` behind the server's clock to `futureSkew` ahead.
        let age = Int64(request.headers[fields.timestamp] ?? "").map { clock.timeIntervalSince1970 - Double($0) }
        guard let timestamp = Int64(request.headers[fields.timestamp] ?? ""), let age, age < window - futureSkew,
            -age <= futureSkew
        else {
            var refused = Self.refuse(.staleTimestamp, detail: ["serverTime": String(Int64(clock.timeIntervalSince1970.rounded(.down)))])
            refused.headers[.wwwAuthenticate] = RequestSignature.clockSkewChallenge(serverTime: clock)
            return refused
        }
        guard let signature = RequestSignature.bytes(fromHex: request.headers[fields.signature] ?? ""),
            let declaredHash = request.headers[fields.contentSHA256], RequestSignature.bytes(fromHex: declaredHash) != nil
        else {
            return Self.refuse(.badSignature)
        }
        let signedNames = (request.headers[fields.signedHeaders] ?? "").split(separator: ";").map { $0.lowercased() }
        guard signedNames.count <= RequestSignature.Limits.signedFieldCount else {
            return Self.tooLarge(fields.signedHeaders.canonicalName)
        }
        guard signedNames.contains("content-type") else {
            return Self.refuse(.malformedRequest, detail: ["detail": "content-type must be signed"])
        }
        let signedFields = signedNames.map { name -> (name: String, value: String?) in
            let values = HTTPField.Name(name).map { request.headers[values: $0] } ?? []
            return (name, values.isEmpty ? nil : values.joined(separator: ","))
        }
        if let long = signedFields.first(where: { ($0.value?.utf8.count ?? 0) > RequestSignature.Limits.signedFieldLength }) {
            return Self.tooLarge(long.name)
        }
        let authority = request.head.authority ?? request.headers[.init("Host")!] ?? ""
        let canonical: String
        do throws(RequestSignature.FormatError) {
            canonical = try RequestSignature.canonicalRequest(
                RequestSignature.Parts(
                    method: request.method.rawValue, scheme: scheme ?? request.head.scheme ?? "http", authority: authority,
                    pathAndQuery: request.head.path ?? "/", signedFields: signedFields, bodySHA256: declaredHash.lowercased(),
                    timestamp: timestamp, nonce: nonce, keyID: keyID))
        } catch {
            return Self.refuse(.malformedRequest, detail: ["detail": error.reason])
        }
        let authentic = secrets.contains { secret in
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(canonical.utf8), using: secret)
        }
        guard authentic else { return Self.refuse(.badSignature) }

        // Remembered for as long as the timestamp stays acceptable (until it is `window −
        // futureSkew` old): at most `window` from now.
        let expiry = Date(timeIntervalSince1970: Double(timestamp) + window - futureSkew)
        let recording: NonceRecording
        do {
            // The device counts only when its field is signed: an unsigned one anyone could vary.
            let device = signedFields.first { $0.name == Self.deviceField.canonicalName }?.value
            recording = try await nonces.record(
                "\(keyID)\u{0}\(nonce)", holder: NonceHolder(keyID: keyID, device: device), expiry: expiry, now: clock)
        } catch {
            return Self.unavailable(.nonceStoreFull, retryAfter: 1)
        }
        switch recording {
        case .replayed: return Self.refuse(.replayedNonce)
        case .full(let roomAt):
            let wait = roomAt.map { $0.timeIntervalSince(clock) } ?? 1
            return Self.unavailable(.nonceStoreFull, retryAfter: Int(min(max(wait, 1), window).rounded(.up)))
        case .overQuota(let level, let roomAt):
            let wait = roomAt.map { $0.timeIntervalSince(clock) } ?? 1
            VerifierRefusal.current?.reason = Reason.nonceQuotaExceeded.rawValue
            var response = JSONResponse.make(
                ["code": 429, "reason": Reason.nonceQuotaExceeded.rawValue, "level": level.rawValue], status: .tooManyRequests)
            response.headers[.retryAfter] = String(Int(min(max(wait, 1), window).rounded(.up)))
            return response
        case .fresh: break
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodySize {
            return Self.note(.bodyTooLarge, JSONResponse.make(["code": 413, "reason": Reason.bodyTooLarge.rawValue], status: .contentTooLarge))
        }
        VerifierRefusal.current?.end()
        var verified = request
        verified.body = RequestBody(
            asyncSequence: HashCheckedBody(
                base: request.body, expectedHash: declaredHash.lowercased(), maximumSize: maximumBodySize))
        do {
            return try await next(verified, context)
        } catch let failure as HashCheckedBody.Refusal {
            switch failure {
            case .mismatch: return Self.refuse(.bodyMismatch)
            case .tooLarge:
                return Self.note(.bodyTooLarge, JSONResponse.make(["code": 413, "reason": Reason.bodyTooLarge.rawValue], status: .contentTooLarge))
            }
        }
    }

    /// Notes `reason` as the refusal of the request being verified, for its count.
    static func note(_ reason: Reason, _ response: Response) -> Response {
        VerifierRefusal.current?.reason = reason.rawValue
        return response
    }

    static func refuse(_ reason: Reason, detail: [String: String] = [:]) -> Response {
        VerifierRefusal.current?.reason = reason.rawValue
        var object: [String: Any] = ["code": 401, "reason": reason.rawValue]
        for (key, value) in detail { object[key] = value }
        var response = JSONResponse.make(object, status: .unauthorized)
        // Every 401 names its scheme and why (RFC 9110 §11.6.1).
        response.headers[.wwwAuthenticate] = "\(RequestSignature.challengeScheme) error=\"\(reason.rawValue)\""
        return response
    }

    static func tooLarge(_ header: String) -> Response {
        VerifierRefusal.current?.reason = Reason.fieldTooLarge.rawValue
        return JSONResponse.make(
            ["code": 431, "reason": Reason.fieldTooLarge.rawValue, "header": header], status: .requestHeaderFieldsTooLarge)
    }

    static func unavailable(_ reason: Reason, retryAfter seconds: Int) -> Response {
        VerifierRefusal.current?.reason = reason.rawValue
        var response = JSONResponse.make(["code": 503, "reason": reason.rawValue], status: .serviceUnavailable)
        response.headers[.retryAfter] = String(seconds)
        return response
    }
}

/// The longest value each signature field may have: the nonce and key id by
/// `RequestSignature.Limits`, the rest by their format (decimal seconds, SHA-256 hex, at most
/// `signedFieldCount` names). Built once, not per request (a generic type has no stored statics).
private enum SignatureFieldLimits {
    static let all: [(HTTPField.Name, Int)] = {
        let fields = RequestSignature.Field.self
        let limits = RequestSignature.Limits.self
        return [
            (fields.keyID, limits.keyIDLength), (fields.nonce, limits.nonceLength), (fields.timestamp, 20),
            (fields.contentSHA256, 64), (fields.signature, 64), (fields.signedHeaders, limits.signedFieldCount * 64),
        ]
    }()
}

/// The verification of one request: why it was refused, for its count, and its span. Written
/// and read only by the task verifying the request.
final class VerifierRefusal: @unchecked Sendable {
    /// The refusal's reason; `nil` while admitted.
    var reason: String? {
        didSet { span?.attributes["runway.verifier.outcome"] = reason }
    }
    let span: (any Span)?
    private var ended = false
    @TaskLocal static var current: VerifierRefusal?

    init(span: (any Span)?) {
        self.span = span
        span?.attributes["runway.verifier.outcome"] = "admitted"
    }

    /// Ends the span, once: when the request is admitted (before the route runs) or refused.
    func end() {
        guard !ended else { return }
        ended = true
        if reason != nil { span?.setStatus(SpanStatus(code: .error)) }
        span?.end()
    }
}
