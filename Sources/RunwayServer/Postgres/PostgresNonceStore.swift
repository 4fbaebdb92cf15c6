import Crypto
public import Foundation
import Runway
import NIOConcurrencyHelpers

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
/// (``MemoryNonceStore/capacity(forRequestsPerSecond:window:)``): rate × window.
public final class PostgresNonceStore: NonceStore {
    private struct Census {
        var calls = 0
        /// Live rows at the last sweep, plus this process's claims since.
        var live = 0
        /// The earliest expiry at the last sweep, in milliseconds.
        var earliestExpiry: Int64?
    }

    private let database: PostgresCollectorDatabase
    private let sweepEvery: Int
    /// How many live nonces the table holds at most (see the type's discussion).
    public let capacity: Int
    private let census = NIOLockedValueBox(Census())

    /// A store over `database` holding at most `capacity` live nonces (by default enough for
    /// 2,000 signed requests a second over 300 s); expired nonces are deleted, and the live ones
    /// counted, every `sweepEvery` recordings and at the first.
    public init(
        database: PostgresCollectorDatabase, capacity: Int = MemoryNonceStore.capacity(forRequestsPerSecond: 2_000),
        sweepEvery: Int = 1_000
    ) {
        self.database = database
        self.capacity = max(capacity, 1)
        self.sweepEvery = max(sweepEvery, 1)
    }

    public func record(_ nonce: String, expiry: Date, now: Date) async throws -> NonceRecording {
        let key = RequestSignature.hex(SHA256.hash(data: Data(nonce.utf8)))
        let expiryMilliseconds = Int64((expiry.timeIntervalSince1970 * 1000).rounded(.up))
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let sweeps = census.withLockedValue { census -> Bool in
            defer { census.calls += 1 }
            return census.calls % sweepEvery == 0
        }
        if sweeps { try await sweep(now: nowMilliseconds) }
        let (full, earliest) = census.withLockedValue { ($0.live >= capacity, $0.earliestExpiry) }
        if full {
            // Room comes when the earliest nonce expires: only then is looking again worth a query.
            if earliest.map({ nowMilliseconds >= $0 }) ?? true { try await sweep(now: nowMilliseconds) }
            let (stillFull, earliest) = census.withLockedValue { ($0.live >= capacity, $0.earliestExpiry) }
            if stillFull {
                // A replay is a replay, full or not.
                let live = try await database.client.query(
                    "SELECT 1 FROM signature_nonce WHERE nonce = \(key) AND expiry_ms > \(nowMilliseconds)",
                    logger: database.logger)
                for try await _ in live { return .replayed }
                return .full(roomAt: earliest.map { Date(timeIntervalSince1970: Double($0) / 1000) })
            }
        }
        let rows = try await database.client.query(
            """
            INSERT INTO signature_nonce (nonce, expiry_ms) VALUES (\(key), \(expiryMilliseconds))
            ON CONFLICT (nonce) DO UPDATE SET expiry_ms = EXCLUDED.expiry_ms
            WHERE signature_nonce.expiry_ms <= \(nowMilliseconds)
            RETURNING 1
            """, logger: database.logger)
        for try await _ in rows {
            census.withLockedValue { $0.live += 1 }
            return .fresh
        }
        return .replayed
    }

    /// Deletes the expired rows and counts the live ones.
    private func sweep(now: Int64) async throws {
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
