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
