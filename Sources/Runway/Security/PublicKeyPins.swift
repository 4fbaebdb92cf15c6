import Crypto
import Foundation

/// The public keys a host may present: SHA-256 hashes of their SubjectPublicKeyInfo, base64
/// (the form HPKP and `openssl … | openssl dgst -sha256 -binary | base64` produce), and which
/// certificates of the connection they are checked against.
///
/// Pins belong to a ``Service`` (``Service/Connection/pins``): every request to the pinned host — the
/// service's own, or another's redirected there — is checked on each new TLS connection,
/// after the system's usual chain validation. Pin the key in use and at least one backup key kept
/// offline, so a key rotation does not lock the app out. A connection whose certificates match
/// none of the pins fails with ``RunwayError/pinningFailed(host:)`` before any request is sent.
///
/// A transport checks only the scopes it names in ``Transport/pinScopes``; ``Engine/register(_:)``
/// refuses a service whose pins ask for more, so a pin is never silently weaker than it reads.
public struct PublicKeyPins: Sendable, Hashable {
    /// Which certificates of a connection a pin may match.
    public enum Scope: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The server's own certificate (the leaf) carries a pinned key: the strictest rule, and
        /// the one every transport that pins can check.
        case leaf
        /// Some certificate of the chain the system validated — the leaf, an intermediate or the
        /// root — carries a pinned key: pin a certificate authority's key to survive the server
        /// certificate's rotation. Checking it needs the validated chain, which not every
        /// transport is given.
        case anyCertificateInChain

        public var description: String {
            switch self {
            case .leaf: "the leaf certificate"
            case .anyCertificateInChain: "any certificate of the validated chain"
            }
        }
    }

    /// The host the pins apply to (exactly, lowercase).
    public let host: String
    /// The accepted SPKI SHA-256 hashes, base64.
    public let pins: Set<String>
    /// Which certificates of the connection may carry a pinned key.
    public let scope: Scope

    /// Creates the pins of `host`.
    ///
    /// - parameters:
    ///   - host: The host name the pins hold for, as requests spell it.
    ///   - primary: The hash of the key in use.
    ///   - backups: Hashes of keys kept ready for rotation.
    ///   - scope: Which certificates may carry a pinned key; the leaf by default.
    public init(host: String, primary: String, backups: [String], scope: Scope = .leaf) {
        self.host = host.lowercased()
        self.pins = Set([primary] + backups)
        self.scope = scope
    }

    /// Whether a key with SubjectPublicKeyInfo `spki` (DER) is pinned.
    public func accepts(spki: some Sequence<UInt8>) -> Bool {
        pins.contains(Self.pin(ofSPKI: spki))
    }

    /// Whether a connection whose validated chain has these keys (SubjectPublicKeyInfo DER, the
    /// leaf first) satisfies the pins under their ``scope``: the one decision every transport
    /// defers to.
    public func accepts(chain: [[UInt8]]) -> Bool {
        switch scope {
        case .leaf: chain.first.map { accepts(spki: $0) } ?? false
        case .anyCertificateInChain: chain.contains { accepts(spki: $0) }
        }
    }

    /// The pin of a SubjectPublicKeyInfo (DER): base64 of its SHA-256.
    public static func pin(ofSPKI spki: some Sequence<UInt8>) -> String {
        Data(SHA256.hash(data: Data(spki))).base64EncodedString()
    }
}
