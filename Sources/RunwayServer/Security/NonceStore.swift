import Foundation
import NIOConcurrencyHelpers

/// The nonces seen within the signature window, so that a replayed request is refused.
///
/// Memory is bounded: entries expire when their timestamp leaves the window, and once
/// ``capacity`` live nonces are held, new requests are refused (fail closed) rather than
/// forgetting nonces that could then be replayed.
final class NonceStore: Sendable {
    enum Outcome: Equatable {
        case fresh
        case replayed
        case full
    }

    private struct State {
        var expiries: [String: Date] = [:]
        var insertsSinceSweep = 0
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) { self.capacity = capacity }

    /// Records `nonce` until `expiry`, unless it is already recorded and live.
    func record(_ nonce: String, expiry: Date, now: Date) -> Outcome {
        state.withLockedValue { state in
            if let seen = state.expiries[nonce], seen > now { return .replayed }
            state.insertsSinceSweep += 1
            if state.expiries.count >= capacity || state.insertsSinceSweep >= 1024 {
                state.expiries = state.expiries.filter { $0.value > now }
                state.insertsSinceSweep = 0
            }
            guard state.expiries.count < capacity else { return .full }
            state.expiries[nonce] = expiry
            return .fresh
        }
    }

    var count: Int { state.withLockedValue { $0.expiries.count } }
}
