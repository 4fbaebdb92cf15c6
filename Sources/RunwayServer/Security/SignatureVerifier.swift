public import Crypto
import Foundation
public import Hummingbird
import Runway

/// Hummingbird middleware that admits only requests signed by ``Runway/HMACSigner`` with a known
/// key: the server half of Runway's request signing.
///
/// It recomputes the canonical request from what actually arrived (method, path, query, the
/// body's SHA-256) and compares signatures in constant time. It refuses, with 401 and a
/// machine-readable `reason`:
///
/// | reason | when |
/// |---|---|
/// | `missing_header` | a signature header field is absent (`header` names it) |
/// | `unknown_key` | the key id is not configured |
/// | `stale_timestamp` | the timestamp is outside the window, in either direction |
/// | `bad_signature` | no active secret of the key produces the signature |
/// | `replayed_nonce` | the nonce was already used within the window |
/// | `nonce_store_full` | too many live nonces to remember one more (fails closed) |
///
/// Several secrets can be active per key id at once, so a secret can be rotated without a gap.
public struct SignatureVerifier<Context: RequestContext>: RouterMiddleware {
    /// Why a request was refused.
    public enum Reason: String, Sendable {
        case missingHeader = "missing_header"
        case unknownKey = "unknown_key"
        case staleTimestamp = "stale_timestamp"
        case badSignature = "bad_signature"
        case replayedNonce = "replayed_nonce"
        case nonceStoreFull = "nonce_store_full"
    }

    private let keys: [String: [SymmetricKey]]
    private let window: TimeInterval
    private let now: @Sendable () -> Date
    private let nonces: NonceStore
    private let maximumBodySize: Int

    /// Creates the verifier.
    ///
    /// - parameters:
    ///   - keys: The active secrets of each key id (several during a rotation).
    ///   - window: How far a timestamp may be from the server's clock, either way. Default 300 s.
    ///   - maximumNonces: How many live nonces are remembered at most.
    ///   - maximumBodySize: The largest body read to check its hash.
    ///   - now: The server's clock; replace it in tests.
    public init(
        keys: [String: [SymmetricKey]], window: Duration = .seconds(300), maximumNonces: Int = 100_000,
        maximumBodySize: Int = 4 << 20, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.keys = keys
        self.window = Double(window.components.seconds)
        self.now = now
        self.nonces = NonceStore(capacity: maximumNonces)
        self.maximumBodySize = maximumBodySize
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let fields = RequestSignature.Field.self
        for name in fields.all where request.headers[name] == nil {
            return Self.refuse(.missingHeader, detail: ["header": name.canonicalName])
        }
        let keyID = request.headers[fields.keyID] ?? ""
        let nonce = request.headers[fields.nonce] ?? ""
        let apiName = request.headers[fields.apiName] ?? ""
        guard let secrets = keys[keyID] else { return Self.refuse(.unknownKey) }
        let clock = now()
        guard let timestamp = Int64(request.headers[fields.timestamp] ?? ""),
            abs(Double(timestamp) - clock.timeIntervalSince1970) <= window
        else { return Self.refuse(.staleTimestamp) }
        guard let signature = Self.bytes(fromHex: request.headers[fields.signature] ?? "") else {
            return Self.refuse(.badSignature)
        }

        let body = try await request.body.collect(upTo: maximumBodySize)
        let bodyData = Data(body.readableBytesView)
        let canonical = RequestSignature.canonicalRequest(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
            bodySHA256: RequestSignature.sha256Hex(bodyData.isEmpty ? nil : bodyData), timestamp: timestamp,
            nonce: nonce, keyID: keyID, apiName: apiName)
        let authentic = secrets.contains { secret in
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(canonical.utf8), using: secret)
        }
        guard authentic else { return Self.refuse(.badSignature) }

        let expiry = Date(timeIntervalSince1970: Double(timestamp) + window)
        switch nonces.record("\(keyID)\u{0}\(nonce)", expiry: expiry, now: clock) {
        case .replayed: return Self.refuse(.replayedNonce)
        case .full: return Self.refuse(.nonceStoreFull)
        case .fresh: break
        }
        var verified = request
        verified.body = RequestBody(buffer: body)
        return try await next(verified, context)
    }

    static func refuse(_ reason: Reason, detail: [String: String] = [:]) -> Response {
        var object: [String: Any] = ["code": 401, "reason": reason.rawValue]
        for (key, value) in detail { object[key] = value }
        return JSONResponse.make(object, status: .unauthorized)
    }

    static func bytes(fromHex text: String) -> [UInt8]? {
        guard text.utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var iterator = text.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = nibble(high), let l = nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        return bytes
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
