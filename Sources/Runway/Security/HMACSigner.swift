public import Crypto
import Foundation
public import HTTPTypes

/// Signs each request with HMAC-SHA256 over ``RequestSignature``'s canonical request, so the server
/// can tell the call comes from the real app.
///
/// Give each service its own signer and key id. Every attempt is signed afresh (retries too), with
/// a new timestamp and nonce. The secret never appears in logs, descriptions or error messages.
///
/// For example:
///
/// ```swift
/// let signer = HMACSigner(keyID: "ios-app-2026", secret: SymmetricKey(data: secretBytes))
/// Engine.shared.register(Service(id: .listings, baseURLs: …, signer: signer))
/// ```
public struct HMACSigner: RequestSigner, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The id the server looks the key up by.
    public let keyID: String
    private let secret: SymmetricKey
    private let now: @Sendable () -> Date
    private let makeNonce: @Sendable () -> String

    /// Creates a signer.
    ///
    /// - parameters:
    ///   - keyID: The key's id, sent with each request.
    ///   - secret: The shared secret (32 random bytes or more).
    ///   - now: The clock for timestamps; replace it in tests.
    ///   - nonce: Makes each request's nonce; a random UUID by default.
    public init(
        keyID: String, secret: SymmetricKey, now: @escaping @Sendable () -> Date = { Date() },
        nonce: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.keyID = keyID
        self.secret = secret
        self.now = now
        self.makeNonce = nonce
    }

    public func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        let timestamp = Int64(now().timeIntervalSince1970.rounded(.down))
        let nonce = makeNonce()
        let bodyHash = RequestSignature.sha256Hex(body)
        let (path, query) = RequestSignature.split(request.path ?? "/")
        let canonical = RequestSignature.canonicalRequest(
            method: request.method.rawValue, path: path, query: query, bodySHA256: bodyHash, timestamp: timestamp,
            nonce: nonce, keyID: keyID, apiName: context.apiName)
        let fields = RequestSignature.Field.self
        request.headerFields[fields.keyID] = keyID
        request.headerFields[fields.timestamp] = String(timestamp)
        request.headerFields[fields.nonce] = nonce
        request.headerFields[fields.apiName] = context.apiName
        request.headerFields[fields.contentSHA256] = bodyHash
        request.headerFields[fields.signature] = RequestSignature.hmacHex(canonical, secret: secret)
    }

    /// Names the key id only.
    public var description: String { "HMACSigner(keyID: \(keyID))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID]) }
}
