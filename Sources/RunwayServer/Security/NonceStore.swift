import Foundation

/// Where a ``SignatureVerifier`` remembers the nonces it has seen within its window, so that a
/// replayed request is refused.
///
/// One verifier process uses ``MemoryNonceStore``. Several verifier processes behind a load
/// balancer must share one store — otherwise a request replayed to another process passes —
/// so they implement this protocol over a shared database (one row per nonce, unique on the
/// nonce, expired rows deleted by expiry), as ``PostgresNonceStore`` does.
public protocol NonceStore: Sendable {
    /// Records `nonce` until `expiry`, unless it is already recorded and live.
    ///
    /// - returns: ``NonceRecording/fresh`` when recorded now; ``NonceRecording/replayed`` when
    ///   already live; ``NonceRecording/full(roomAt:)`` when the store cannot remember one more.
    /// - throws: When the store cannot be reached; the verifier answers 503.
    func record(_ nonce: String, expiry: Date, now: Date) async throws -> NonceRecording

    /// Records `nonce` for `holder`, who may hold at most its ``NonceQuota`` of the store:
    /// ``NonceRecording/overQuota(_:roomAt:)`` beyond it, whatever room the store has. What the
    /// verifier calls; a store without quotas records as ``record(_:expiry:now:)`` does (the
    /// default).
    func record(_ nonce: String, holder: NonceHolder, expiry: Date, now: Date) async throws -> NonceRecording

    /// The live nonces held and the capacity, as this process last saw them, for the
    /// `runway_nonce_store_*` gauges; `nil` (the default) when the store cannot tell.
    var fill: (entries: Int, capacity: Int)? { get }
}

extension NonceStore {
    public func record(_ nonce: String, holder: NonceHolder, expiry: Date, now: Date) async throws -> NonceRecording {
        try await record(nonce, expiry: expiry, now: now)
    }

    public var fill: (entries: Int, capacity: Int)? { nil }
}

/// What recording a nonce found.
public enum NonceRecording: Sendable, Hashable {
    /// The nonce is new and now recorded.
    case fresh
    /// The nonce was already used within the window.
    case replayed
    /// The store is at capacity; the request is refused (fail closed) rather than forgetting
    /// nonces that could then be replayed. `roomAt` is when the earliest live nonce expires
    /// (the verifier's `Retry-After`), when the store knows.
    case full(roomAt: Date?)
    /// The request's holder already holds its quota of live nonces: its own flood is refused
    /// (the verifier answers 429), while everyone else's requests are still recorded. `roomAt`
    /// is when the holder's earliest nonce expires, when the store knows.
    case overQuota(NonceHolder.Level, roomAt: Date?)
}

/// Whose nonce it is: the key that signed the request and, when the request names one in a
/// signed header field, the device that sent it. Quotas are counted per key and per device of a
/// key, so one holder's flood fills its own share of the store, not everyone's.
public struct NonceHolder: Sendable, Hashable {
    /// A level a quota is counted at.
    public enum Level: String, Sendable, Hashable {
        /// Every request signed with one key id.
        case key
        /// Every request of one key id that names one device.
        case device
    }

    /// The key id that signed the request.
    public var keyID: String
    /// The device the request named in a signed field, if it named one.
    public var device: String?

    /// A holder.
    public init(keyID: String, device: String? = nil) {
        self.keyID = keyID
        self.device = device
    }
}

/// How many live nonces one holder may hold: a key's (every client that signs with it) and a
/// device's (every request of one key that names that device in a signed field).
///
/// An app usually ships one key in every install, so the key's quota is off by default (every
/// install shares it) and the device's is what keeps one install's flood its own problem.
/// Servers with a key per partner set ``perKey``. A request without a device field counts
/// against its key's quota only. A device id is only as trustworthy as the key: a holder of an
/// extracted app key can name a new device per request, which the key's quota then bounds.
public struct NonceQuota: Sendable, Hashable {
    /// The most live nonces of one key id; `nil`: no limit but the store's capacity.
    public var perKey: Int?
    /// The most live nonces of one device of a key; `nil`: no limit but the key's.
    public var perDevice: Int?

    /// Quotas; none by default.
    public init(perKey: Int? = nil, perDevice: Int? = nil) {
        self.perKey = perKey.map { max($0, 1) }
        self.perDevice = perDevice.map { max($0, 1) }
    }

    /// A device's share of a store of `capacity`: 1 % (at the default capacity, 7,500 nonces —
    /// 25 signed requests a second for 300 s), and no quota per key.
    public static func `default`(capacity: Int) -> NonceQuota {
        NonceQuota(perDevice: max(capacity / 100, 1))
    }
}
