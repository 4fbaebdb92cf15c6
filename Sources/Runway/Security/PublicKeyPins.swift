import Crypto
import Foundation

/// The public keys a host may present: SHA-256 hashes of their SubjectPublicKeyInfo, base64
/// (the form HPKP and `openssl … | openssl dgst -sha256 -binary | base64` produce).
///
/// Pin the key in use and at least one backup key kept offline, so a key rotation does not lock
/// the app out. A connection whose server key matches none of the pins fails with
/// ``RunwayError/pinningFailed(host:)`` before any request is sent.
public struct PublicKeyPins: Sendable, Hashable {
    /// The host the pins apply to (exactly, lowercase).
    public let host: String
    /// The accepted SPKI SHA-256 hashes, base64.
    public let pins: Set<String>

    /// Creates the pins of `host`.
    ///
    /// - parameters:
    ///   - host: The host name the pins hold for, as requests spell it.
    ///   - primary: The hash of the key in use.
    ///   - backups: Hashes of keys kept ready for rotation.
    public init(host: String, primary: String, backups: [String]) {
        self.host = host.lowercased()
        self.pins = Set([primary] + backups)
    }

    /// Whether a key with SubjectPublicKeyInfo `spki` (DER) is pinned.
    public func accepts(spki: some Sequence<UInt8>) -> Bool {
        pins.contains(Self.pin(ofSPKI: spki))
    }

    /// The pin of a SubjectPublicKeyInfo (DER): base64 of its SHA-256.
    public static func pin(ofSPKI spki: some Sequence<UInt8>) -> String {
        Data(SHA256.hash(data: Data(spki))).base64EncodedString()
    }
}
