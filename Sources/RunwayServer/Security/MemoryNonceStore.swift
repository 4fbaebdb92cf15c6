import Crypto
import Foundation
import NIOConcurrencyHelpers

/// The in-memory ``NonceStore``: bounded in entries and in bytes, with a quota per key and per
/// device (``NonceQuota``), and expiring nonces in O(1) amortised time.
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
///
/// **Restarts.** The store lives in the process: after a restart it is empty, so a request
/// captured before the restart can be replayed to the new process until its timestamp leaves
/// the window (at most the window, 300 s by default). Where that matters, or with more than
/// one process, use a shared store (``PostgresNonceStore``), which outlives each process.
public final class MemoryNonceStore: NonceStore {
    private struct Entry {
        var nonce: SHA256Digest
        var key: String
        var device: SHA256Digest?
    }

    /// One holder's live nonces, by the second they expire.
    private struct Share {
        var count = 0
        var bySecond: [Int64: Int] = [:]

        mutating func add(_ second: Int64) {
            count += 1
            bySecond[second, default: 0] += 1
        }

        /// Removes one nonce expiring at `second`; whether the share is now empty.
        mutating func remove(_ second: Int64) -> Bool {
            count -= 1
            if let left = bySecond[second], left > 1 { bySecond[second] = left - 1 } else { bySecond[second] = nil }
            return count <= 0
        }

        var roomAt: Date? { bySecond.keys.min().map { Date(timeIntervalSince1970: Double($0)) } }
    }

    private struct State {
        var expiries: [SHA256Digest: Int64] = [:]
        var buckets: [Int64: [Entry]] = [:]
        var keys: [String: Share] = [:]
        var devices: [SHA256Digest: Share] = [:]
        /// Every bucket before this second has been dropped.
        var sweptUpTo: Int64 = .min
    }

    /// How many live nonces are kept at most.
    public let capacity: Int
    /// How many of them one key, and one device of a key, may hold.
    public let quota: NonceQuota
    private let state = NIOLockedValueBox(State())

    /// The capacity that holds every nonce of `requestsPerSecond` signed requests, each kept
    /// for `window`, with a quarter to spare for bursts.
    public static func capacity(forRequestsPerSecond requestsPerSecond: Int, window: Duration = .seconds(300)) -> Int {
        let perWindow = Double(max(requestsPerSecond, 1)) * max(Double(window.components.seconds), 1) * 1.25
        return perWindow >= Double(Int.max) ? Int.max : Int(perWindow.rounded(.up))
    }

    /// Creates a store holding at most `capacity` live nonces: by default enough for 2,000
    /// signed requests a second over a 300 s window (750,000), 1 % of them per device
    /// (``NonceQuota/default(capacity:)``) unless `quota` says otherwise.
    public init(capacity: Int = MemoryNonceStore.capacity(forRequestsPerSecond: 2_000), quota: NonceQuota? = nil) {
        self.capacity = max(capacity, 1)
        self.quota = quota ?? .default(capacity: max(capacity, 1))
    }

    public func record(_ nonce: String, expiry: Date, now: Date) -> NonceRecording {
        record(nonce, holder: NonceHolder(keyID: ""), expiry: expiry, now: now)
    }

    public func record(_ nonce: String, holder: NonceHolder, expiry: Date, now: Date) -> NonceRecording {
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        let expirySecond = Int64(expiry.timeIntervalSince1970.rounded(.up))
        let key = SHA256.hash(data: Data(nonce.utf8))
        let device = holder.device.map { SHA256.hash(data: Data("\(holder.keyID)\u{0}\($0)".utf8)) }
        return state.withLockedValue { state in
            Self.expire(&state, through: second)
            if let seen = state.expiries[key], seen > second { return .replayed }
            if let limit = quota.perDevice, let device, let share = state.devices[device], share.count >= limit {
                return .overQuota(.device, roomAt: share.roomAt)
            }
            if let limit = quota.perKey, let share = state.keys[holder.keyID], share.count >= limit {
                return .overQuota(.key, roomAt: share.roomAt)
            }
            guard state.expiries.count < capacity else {
                // Room frees when the earliest bucket's second comes.
                let earliest = state.buckets.keys.min()
                return .full(roomAt: earliest.map { Date(timeIntervalSince1970: Double($0)) })
            }
            state.expiries[key] = expirySecond
            state.keys[holder.keyID, default: Share()].add(expirySecond)
            // The key id as the share's dictionary holds it: every entry shares one string.
            let keyID = state.keys.index(forKey: holder.keyID).map { state.keys[$0].key } ?? holder.keyID
            state.buckets[expirySecond, default: []].append(Entry(nonce: key, key: keyID, device: device))
            if let device { state.devices[device, default: Share()].add(expirySecond) }
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
            for entry in state.buckets.removeValue(forKey: bucket) ?? [] {
                if state.expiries[entry.nonce] == bucket { state.expiries.removeValue(forKey: entry.nonce) }
                if state.keys[entry.key]?.remove(bucket) == true { state.keys[entry.key] = nil }
                if let device = entry.device, state.devices[device]?.remove(bucket) == true { state.devices[device] = nil }
            }
        }
        state.sweptUpTo = second + 1
    }

    /// Live nonces held.
    public var count: Int { state.withLockedValue { $0.expiries.count } }

    public var fill: (entries: Int, capacity: Int)? { (count, capacity) }
}
