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
    ///   already live; ``NonceRecording/full`` when the store cannot remember one more.
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
    /// nonces that could then be replayed.
    case full
}

/// The in-memory ``NonceStore``: bounded, and expiring nonces in O(1) amortised time.
///
/// Nonces are kept in one-second buckets by expiry; each record first drops the buckets whose
/// second has passed, each nonce exactly once, so no request ever pays for a sweep of the whole
/// store, and a full store answers at once.
public final class MemoryNonceStore: NonceStore {
    private struct State {
        var expiries: [String: Int64] = [:]
        var buckets: [Int64: [String]] = [:]
        /// Every bucket before this second has been dropped.
        var sweptUpTo: Int64 = .min
    }

    /// How many live nonces are kept at most.
    public let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// Creates a store holding at most `capacity` live nonces.
    public init(capacity: Int = 100_000) { self.capacity = capacity }

    public func record(_ nonce: String, expiry: Date, now: Date) -> NonceRecording {
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        let expirySecond = Int64(expiry.timeIntervalSince1970.rounded(.up))
        return state.withLockedValue { state in
            Self.expire(&state, through: second)
            if let seen = state.expiries[nonce], seen > second { return .replayed }
            guard state.expiries.count < capacity else { return .full }
            state.expiries[nonce] = expirySecond
            state.buckets[expirySecond, default: []].append(nonce)
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
            for nonce in state.buckets.removeValue(forKey: bucket) ?? [] where state.expiries[nonce] == bucket {
                state.expiries.removeValue(forKey: nonce)
            }
        }
        state.sweptUpTo = second + 1
    }

    /// Live nonces held.
    public var count: Int { state.withLockedValue { $0.expiries.count } }
}
