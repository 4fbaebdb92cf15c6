import Foundation
import PostgresNIO

/// Idempotency keys in PostgreSQL, shared by every collector process on the database: a claim is
/// one `INSERT … ON CONFLICT … DO UPDATE … WHERE` that takes a free or stale key atomically, so
/// two processes never both run one key.
public final class PostgresIdempotencyStore: IdempotencyStore {
    private let database: PostgresCollectorDatabase

    /// A store over `database`, whose tables ``PostgresCollectorDatabase/connect(_:logger:timeout:)`` made.
    public init(database: PostgresCollectorDatabase) { self.database = database }

    public func claim(_ key: String, fingerprint: String, now: Int64, leaseUntil: Int64) async throws -> IdempotencyClaim {
        // Taken when free, expired, or a claim whose lease ran out with the same request.
        let taken = try await database.client.query(
            """
            INSERT INTO idempotency_key (key, fingerprint, lease_until_ms) VALUES (\(key), \(fingerprint), \(leaseUntil))
            ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint,
                lease_until_ms = excluded.lease_until_ms, answer = NULL, expiry_ms = NULL
            WHERE idempotency_key.expiry_ms <= \(now)
               OR (idempotency_key.answer IS NULL AND idempotency_key.lease_until_ms <= \(now)
                   AND idempotency_key.fingerprint = excluded.fingerprint)
            RETURNING 1
            """, logger: database.logger)
        for try await _ in taken { return .claimed }
        let rows = try await database.client.query(
            "SELECT fingerprint, answer FROM idempotency_key WHERE key = \(key)", logger: database.logger)
        for try await (stored, answer) in rows.decode((String, Data?).self) {
            guard stored == fingerprint else { return .mismatch }
            guard let answer else { return .running }
            return StoredAnswer.decoded(answer).map(IdempotencyClaim.answered) ?? .mismatch
        }
        // Swept between the two statements: as good as free, but another request may take it first.
        return .running
    }

    public func complete(_ key: String, answer: StoredAnswer, expiry: Int64) async throws {
        let encoded = try answer.encoded()
        try await database.client.query(
            "UPDATE idempotency_key SET answer = \(encoded), expiry_ms = \(expiry) WHERE key = \(key)",
            logger: database.logger)
    }

    public func release(_ key: String) async throws {
        try await database.client.query(
            "DELETE FROM idempotency_key WHERE key = \(key) AND answer IS NULL", logger: database.logger)
    }

    public func sweep(now: Int64, limit: Int) async throws -> Int {
        let rows = try await database.client.query(
            """
            DELETE FROM idempotency_key WHERE key IN
                (SELECT key FROM idempotency_key WHERE expiry_ms <= \(now) LIMIT \(max(limit, 0)))
            RETURNING 1
            """, logger: database.logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }
}
