public import Crypto
import Foundation
public import HTTPTypes

/// Signs each request with HMAC-SHA256 over ``RequestSignature``'s canonical request, so the server
/// can tell the call comes from the real app.
///
/// Give each service its own signer and key id. Every attempt is signed afresh (retries too), with
/// a new timestamp and nonce. The secret never appears in logs, descriptions or error messages.
///
/// A device's clock may be wrong by minutes or days. When the verifier refuses a timestamp
/// outside its window (a 401 with ``RequestSignature/clockSkewError``), the signer learns the
/// verifier's clock from the answer and the engine signs the request again, once; every later
/// signature uses the corrected clock (``clockOffset``), and no credential refresh starts.
///
/// For example:
///
/// ```swift
/// let signer = HMACSigner(keyID: "ios-app-2026", secret: SymmetricKey(data: secretBytes))
/// try Engine.shared.register(Service(id: .listings, baseURLs: …, credentials: .init(signer: signer)))
/// ```
public struct HMACSigner: RequestSigner, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The id the server looks the key up by.
    public let keyID: String
    /// Header fields signed beside `content-type` (which always is), lowercase.
    public let signedHeaderFields: [String]
    private let secret: SymmetricKey
    private let now: @Sendable () -> Date
    private let makeNonce: @Sendable () -> String
    private let offset = ClockOffset()

    /// Seconds added to the signer's clock: what the verifier's clock was ahead of it when a
    /// signature was last refused for its time (0 until then).
    public var clockOffset: TimeInterval { offset.value }

    /// Creates a signer.
    ///
    /// - parameters:
    ///   - keyID: The key's id, sent with each request.
    ///   - secret: The shared secret (32 random bytes or more).
    ///   - signedHeaderFields: Header fields to bind to the signature beside `content-type`
    ///     (for example `authorization`, or an app-build field the server checks).
    ///   - now: The clock for timestamps; replace it in tests.
    ///   - nonce: Makes each request's nonce; a random UUID by default.
    public init(
        keyID: String, secret: SymmetricKey, signedHeaderFields: [HTTPField.Name] = [],
        now: @escaping @Sendable () -> Date = { Date() }, nonce: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.keyID = keyID
        self.secret = secret
        var names = ["content-type"]
        for name in signedHeaderFields.map(\.canonicalName) where !names.contains(name) { names.append(name) }
        self.signedHeaderFields = names
        self.now = now
        self.makeNonce = nonce
    }

    /// The signature fields (``RequestSignature/Field``).
    public var writtenFields: Set<HTTPField.Name> { Set(RequestSignature.Field.all) }

    /// Adds the signature fields to `request`.
    ///
    /// - throws: ``RequestSignature/FormatError`` when the request has no scheme or authority,
    ///   or its query is not validly percent-encoded.
    public func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw RequestSignature.FormatError(reason: "the request has no scheme or authority")
        }
        guard let timestamp = Int64(exactly: offset.adjusted(now()).timeIntervalSince1970.rounded(.down)) else {
            throw RequestSignature.FormatError(reason: "the clock reads a time no timestamp can hold")
        }
        let nonce = makeNonce()
        let bodyHash = context.bodySHA256 ?? RequestSignature.sha256Hex(body)
        let signed = signedHeaderFields.map { name -> (name: String, value: String?) in
            let values = HTTPField.Name(name).map { request.headerFields[values: $0] } ?? []
            return (name, values.isEmpty ? nil : values.joined(separator: ","))
        }
        let canonical = try RequestSignature.canonicalRequest(
            RequestSignature.Parts(
                method: request.method.rawValue, scheme: scheme, authority: authority, pathAndQuery: request.path ?? "/",
                signedFields: signed, bodySHA256: bodyHash, timestamp: timestamp, nonce: nonce, keyID: keyID))
        let fields = RequestSignature.Field.self
        request.headerFields[fields.keyID] = keyID
        request.headerFields[fields.timestamp] = String(timestamp)
        request.headerFields[fields.nonce] = nonce
        request.headerFields[fields.contentSHA256] = bodyHash
        request.headerFields[fields.signedHeaders] = signed.map(\.name).sorted().joined(separator: ";")
        request.headerFields[fields.signature] = RequestSignature.hmacHex(canonical, secret: secret)
    }

    /// Learns the verifier's clock from a 401 whose challenge says the timestamp was outside the
    /// window.
    public func correctsClock(after response: HTTPResponse, body: Data) -> Bool {
        guard let serverTime = RequestSignature.serverTime(ifClockSkewed: response) else { return false }
        // A server time a week or more away is not learnt: the refusal lands as the 401 it is.
        return offset.learn(serverTime: serverTime, localTime: now())
    }

    /// Names the key id only.
    public var description: String { "HMACSigner(keyID: \(keyID))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID]) }
}
