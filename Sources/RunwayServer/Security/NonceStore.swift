import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Where a ``SignatureVerifier`` remembers the nonces it has seen within its window, so that a
/// replayed request is refused.
///
/// One verifier process uses ``MemoryNonceStore``. Several verifier processes behind a load
/// balancer must share one store — otherwise a request replayed to another process passes —
/// so they implement this protocol over a shared database (one row per nonce, unique on the
/// nonce, expired rows deleted by expiry).
public protocol NonceStore: Sendable {
    /// Records `nonce` until `expiry`, unless it is already recorded and live.
    ///
    /// - returns: ``NonceRecording/fresh`` when recorded now; ``NonceRecording/replayed`` when
    ///   already live; ``NonceRecording/full(roomAt:)`` when the store cannot remember one more.
    /// - throws: When the store cannot be reached; the verifier answers 503.
    func record(_ nonce: String, expiry: Date, now: Date) async throws -> NonceRecording
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
}

/// The in-memory ``NonceStore``: bounded in entries and in bytes, and expiring nonces in O(1)
/// amortised time.
///
/// Each nonce is kept as its SHA-256, so an entry costs the same whatever the nonce's length
/// (about 100 bytes with the dictionary's overhead: 750,000 entries, the default, are about
/// 75 MB). Nonces are kept in one-second buckets by expiry; each record first drops the buckets
/// whose second has passed, each nonce exactly once, so no request ever pays for a sweep of the
/// whole store, and a full store answers at once, with when room frees.
///
/// **Sizing.** A verifier keeps each nonce at most its window, so at a steady `r` signed
/// requests a second the store holds at most `r × window` nonces. Size it with
/// ``capacity(forRequestsPerSecond:window:)``; the default serves 2,000 signed requests a second
/// with the default 300 s window, with a quarter to spare for bursts.
public final class MemoryNonceStore: NonceStore {
    private struct State {
        var expiries: [SHA256Digest: Int64] = [:]
        var buckets: [Int64: [SHA256Digest]] = [:]
        /// Every bucket before this second has been dropped.
        var sweptUpTo: Int64 = .min
    }

    /// How many live nonces are kept at most.
    public let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// The capacity that holds every nonce of `requestsPerSecond` signed requests, each kept
    /// for `window`, with a quarter to spare for bursts.
    public static func capacity(forRequestsPerSecond requestsPerSecond: Int, window: Duration = .seconds(300)) -> Int {
        let perWindow = Double(max(requestsPerSecond, 1)) * max(Double(window.components.seconds), 1) * 1.25
        return perWindow >= Double(Int.max) ? Int.max : Int(perWindow.rounded(.up))
    }

    /// Creates a store holding at most `capacity` live nonces: by default enough for 2,000
    /// signed requests a second over a 300 s window (750,000).
    public init(capacity: Int = MemoryNonceStore.capacity(forRequestsPerSecond: 2_000)) { self.capacity = capacity }

    public func record(_ nonce: String, expiry: Date, now: Date) -> NonceRecording {
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        let expirySecond = Int64(expiry.timeIntervalSince1970.rounded(.up))
        let key = SHA256.hash(data: Data(nonce.utf8))
        return state.withLockedValue { state in
            Self.expire(&state, through: second)
            if let seen = state.expiries[key], seen > second { return .replayed }
            guard state.expiries.count < capacity else {
                // Room frees when the earliest bucket's second comes.
                let earliest = state.buckets.keys.min()
                return .full(roomAt: earliest.map { Date(timeIntervalSince1970: Double($0)) })
            }
            state.expiries[key] = expirySecond
            state.buckets[expirySecond, default: []].append(key)
            return .fresh
        }
    }

    /// Drops every bucket whose second is at or before `second`.
    private static func expire(_ state: inout State, through second: Int64) {
        guard second >= state.sweptUpTo else { return }
        let span = state.sweptUpTo == .min ? Int64.max : second - state.sweptUpTo
        // Walk the seconds when that is shorter than the buckets; otherwise the buckets.
        let due: [Int64] =
            span < Int64(state.buckets.count)
            ? (state.sweptUpTo...second).filter { state.buckets[$0] != nil }
            : state.buckets.keys.filter { $0 <= second }
        for bucket in due {
            for key in state.buckets.removeValue(forKey: bucket) ?? [] where state.expiries[key] == bucket {
                state.expiries.removeValue(forKey: key)
            }
        }
        state.sweptUpTo = second + 1
    }

    /// Live nonces held.
    public var count: Int { state.withLockedValue { $0.expiries.count } }
}
