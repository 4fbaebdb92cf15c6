import Crypto
public import Foundation
import Runway
import NIOConcurrencyHelpers
import PostgresNIO

/// A ``NonceStore`` several verifier processes share through PostgreSQL: one replay window for
/// all of them. A nonce is fresh when no unexpired row holds it; the check and the claim are one
/// statement, so two processes can never both accept the same nonce. Nonces are kept as their
/// SHA-256 (fixed size whatever the nonce; the verifier's key also holds a NUL byte, which
/// PostgreSQL text cannot).
///
/// **Expiry and bound.** Every `sweepEvery` recordings a process deletes the expired rows
/// (through the index on expiry) and counts the live ones; while that count is at `capacity`
/// it answers ``NonceRecording/full(roomAt:)`` with the earliest expiry, as the memory store
/// does. Between sweeps each process adds its own claims to the count, so the table holds at
/// most `capacity` plus what the other processes claimed since their last sweep (at most
/// `sweepEvery` each). Size `capacity` as for ``MemoryNonceStore``
/// (``MemoryNonceStore/capacity(forRequestsPerSecond:window:)``): rate × window. A full store
/// sweeps once when its earliest nonce expires, however many requests arrive meanwhile: they
/// wait for that one sweep instead of each deleting and counting.
///
/// **Quotas.** Each row says whose it is (its key, and its device when the request named one);
/// a holder's live rows are counted, through an index, before its claim. Those counts and the
/// claim are separate statements, so requests of one holder racing on several processes can
/// pass its quota by as many as race at once. Counting a key's rows costs up to its quota per
/// request: the key's quota is off by default (see ``NonceQuota``).
public final class PostgresNonceStore: NonceStore {
    private struct Census {
        var calls = 0
        /// Live rows at the last sweep, plus this process's claims since.
        var live = 0
        /// The earliest expiry at the last sweep, in milliseconds.
        var earliestExpiry: Int64?
        /// The sweep running now, which every caller that needs one waits for.
        var sweeping: Task<Void, any Error>?
        /// Sweeps run (for the tests of the herd).
        var sweeps = 0
    }

    private let database: PostgresCollectorDatabase
    private let sweepEvery: Int
    /// How many live nonces the table holds at most (see the type's discussion).
    public let capacity: Int
    /// How many of them one key, and one device of a key, may hold.
    public let quota: NonceQuota
    private let census = NIOLockedValueBox(Census())

    /// A store over `database` holding at most `capacity` live nonces (by default enough for
    /// 2,000 signed requests a second over 300 s), 1 % of them per device unless `quota` says
    /// otherwise; expired nonces are deleted, and the live ones counted, every `sweepEvery`
    /// recordings and at the first.
    public init(
        database: PostgresCollectorDatabase, capacity: Int = MemoryNonceStore.capacity(forRequestsPerSecond: 2_000),
        quota: NonceQuota? = nil, sweepEvery: Int = 1_000
    ) {
        self.database = database
        self.capacity = max(capacity, 1)
        self.quota = quota ?? .default(capacity: max(capacity, 1))
        self.sweepEvery = max(sweepEvery, 1)
    }

    public var fill: (entries: Int, capacity: Int)? { (census.withLockedValue { $0.live }, capacity) }

    /// Sweeps run by this process so far.
    package var sweeps: Int { census.withLockedValue { $0.sweeps } }

    public func record(_ nonce: String, expiry: Date, now: Date) async throws -> NonceRecording {
        try await record(nonce, holder: NonceHolder(keyID: ""), expiry: expiry, now: now)
    }

    public func record(_ nonce: String, holder: NonceHolder, expiry: Date, now: Date) async throws -> NonceRecording {
        let key = Self.hex(nonce)
        let keyHolder = Self.hex(holder.keyID)
        let deviceHolder = holder.device.map { Self.hex("\(holder.keyID)\u{0}\($0)") }
        let expiryMilliseconds = Int64((expiry.timeIntervalSince1970 * 1000).rounded(.up))
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let sweeps = census.withLockedValue { census -> Bool in
            defer { census.calls += 1 }
            return census.calls % sweepEvery == 0
        }
        if sweeps { try await sweep(now: nowMilliseconds) }
        // A slot is taken in the count before the claim, so that requests racing in this
        // process cannot pass the capacity together; it is given back unless the claim succeeds.
        let (full, earliest) = census.withLockedValue { census -> (Bool, Int64?) in
            guard census.live < capacity else { return (true, census.earliestExpiry) }
            census.live += 1
            return (false, nil)
        }
        if full {
            // Room comes when the earliest nonce expires: only then is looking again worth a query.
            if earliest.map({ nowMilliseconds >= $0 }) ?? true { try await sweep(now: nowMilliseconds) }
            let (stillFull, earliest) = census.withLockedValue { census -> (Bool, Int64?) in
                guard census.live < capacity else { return (true, census.earliestExpiry) }
                census.live += 1
                return (false, nil)
            }
            if stillFull {
                // A replay is a replay, full or not.
                if try await isLive(key, now: nowMilliseconds) { return .replayed }
                return .full(roomAt: earliest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
            }
        }
        do {
            let recording = try await claim(
                key, holder: holder, keyHolder: keyHolder, deviceHolder: deviceHolder, expiry: expiryMilliseconds,
                now: nowMilliseconds)
            census.withLockedValue { census in
                if recording == .fresh {
                    census.earliestExpiry = min(census.earliestExpiry ?? expiryMilliseconds, expiryMilliseconds)
                } else {
                    census.live -= 1
                }
            }
            return recording
        } catch {
            census.withLockedValue { $0.live -= 1 }
            throw error
        }
    }

    /// Claims `key` for its holder unless the holder is over its quota or the key is live.
    private func claim(
        _ key: String, holder: NonceHolder, keyHolder: String, deviceHolder: String?, expiry expiryMilliseconds: Int64,
        now nowMilliseconds: Int64
    ) async throws -> NonceRecording {
        if let limit = quota.perDevice, let deviceHolder,
            let over = try await overQuota(.device, deviceHolder, limit: limit, now: nowMilliseconds)
        {
            return try await isLive(key, now: nowMilliseconds) ? .replayed : .overQuota(.device, roomAt: over)
        }
        if let limit = quota.perKey, let over = try await overQuota(.key, keyHolder, limit: limit, now: nowMilliseconds) {
            return try await isLive(key, now: nowMilliseconds) ? .replayed : .overQuota(.key, roomAt: over)
        }
        let rows = try await database.client.query(
            """
            INSERT INTO signature_nonce (nonce, expiry_ms, key_holder, device_holder)
            VALUES (\(key), \(expiryMilliseconds), \(keyHolder), \(deviceHolder))
            ON CONFLICT (nonce) DO UPDATE
            SET expiry_ms = EXCLUDED.expiry_ms, key_holder = EXCLUDED.key_holder, device_holder = EXCLUDED.device_holder
            WHERE signature_nonce.expiry_ms <= \(nowMilliseconds)
            RETURNING 1
            """, logger: database.logger)
        for try await _ in rows { return .fresh }
        return .replayed
    }

    private static func hex(_ text: String) -> String { RequestSignature.hex(SHA256.hash(data: Data(text.utf8))) }

    /// Whether `key` is recorded and live.
    private func isLive(_ key: String, now: Int64) async throws -> Bool {
        let live = try await database.client.query(
            "SELECT 1 FROM signature_nonce WHERE nonce = \(key) AND expiry_ms > \(now)", logger: database.logger)
        for try await _ in live { return true }
        return false
    }

    /// When the holder's earliest live nonce expires, if it holds `limit` or more; `nil` when
    /// it holds fewer. Counts at most `limit` rows, through the holder's index.
    private func overQuota(_ level: NonceHolder.Level, _ holder: String, limit: Int, now: Int64) async throws -> Date? {
        let query: PostgresQuery =
            switch level {
            case .device:
                "SELECT count(*)::BIGINT, min(expiry_ms) FROM (SELECT expiry_ms FROM signature_nonce WHERE device_holder = \(holder) AND expiry_ms > \(now) LIMIT \(limit)) AS held"
            case .key:
                "SELECT count(*)::BIGINT, min(expiry_ms) FROM (SELECT expiry_ms FROM signature_nonce WHERE key_holder = \(holder) AND expiry_ms > \(now) LIMIT \(limit)) AS held"
            }
        let rows = try await database.client.query(query, logger: database.logger)
        for try await (count, earliest) in rows.decode((Int64, Int64?).self) where count >= Int64(limit) {
            return earliest.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        }
        return nil
    }

    /// Deletes the expired rows and counts the live ones: one sweep at a time per process; a
    /// caller arriving while one runs waits for it instead of starting another.
    private func sweep(now: Int64) async throws {
        let task = census.withLockedValue { census -> Task<Void, any Error> in
            if let running = census.sweeping { return running }
            census.sweeps += 1
            let task = Task { try await self.runSweep(now: now) }
            census.sweeping = task
            return task
        }
        defer {
            census.withLockedValue { census in
                if census.sweeping == task { census.sweeping = nil }
            }
        }
        try await task.value
    }

    private func runSweep(now: Int64) async throws {
        try await database.client.query(
            "DELETE FROM signature_nonce WHERE expiry_ms <= \(now)", logger: database.logger)
        let rows = try await database.client.query(
            "SELECT count(*)::BIGINT, min(expiry_ms) FROM signature_nonce", logger: database.logger)
        for try await (live, earliest) in rows.decode((Int64, Int64?).self) {
            census.withLockedValue { census in
                census.live = Int(live)
                census.earliestExpiry = earliest
            }
        }
    }
}
