public import Foundation
import GRDB

/// Idempotency keys in one SQLite file through GRDB (WAL): for one `runway serve` process and the
/// tests. Each claim is one transaction.
public final class SQLiteIdempotencyStore: IdempotencyStore {
    private let pool: DatabasePool

    /// Opens (creating if needed) the store at `url`.
    public init(url: URL) throws {
        pool = try SQLiteFile.open(
            url,
            schema: """
                    CREATE TABLE idempotency_key (
                        key TEXT PRIMARY KEY NOT NULL,
                        fingerprint TEXT NOT NULL,
                        lease_until_ms INTEGER NOT NULL,
                        answer BLOB,
                        expiry_ms INTEGER
                    ) WITHOUT ROWID;
                    CREATE INDEX idempotency_key_expiry ON idempotency_key (expiry_ms);
                """)
    }

    public func claim(_ key: String, fingerprint: String, now: Int64, leaseUntil: Int64) async throws -> IdempotencyClaim {
        try await pool.write { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT fingerprint, lease_until_ms, answer, expiry_ms FROM idempotency_key WHERE key = ?",
                arguments: [key])
            if let row {
                let expiry: Int64? = try row.decode(atIndex: 3)
                let answer: Data? = try row.decode(atIndex: 2)
                let lease: Int64 = try row.decode(atIndex: 1)
                let expired = expiry.map { $0 <= now } ?? false
                if !expired {
                    guard try row.decode(String.self, atIndex: 0) == fingerprint else { return .mismatch }
                    if let answer { return StoredAnswer.decoded(answer).map(IdempotencyClaim.answered) ?? .mismatch }
                    if lease > now { return .running }
                }
            }
            try db.execute(
                sql: """
                    INSERT INTO idempotency_key (key, fingerprint, lease_until_ms, answer, expiry_ms) VALUES (?, ?, ?, NULL, NULL)
                    ON CONFLICT(key) DO UPDATE SET fingerprint = excluded.fingerprint,
                        lease_until_ms = excluded.lease_until_ms, answer = NULL, expiry_ms = NULL
                    """,
                arguments: [key, fingerprint, leaseUntil])
            return .claimed
        }
    }

    public func complete(_ key: String, answer: StoredAnswer, expiry: Int64) async throws {
        let encoded = try answer.encoded()
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE idempotency_key SET answer = ?, expiry_ms = ? WHERE key = ?", arguments: [encoded, expiry, key])
        }
    }

    public func release(_ key: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM idempotency_key WHERE key = ? AND answer IS NULL", arguments: [key])
        }
    }

    public func sweep(now: Int64, limit: Int) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM idempotency_key WHERE key IN (SELECT key FROM idempotency_key WHERE expiry_ms <= ? LIMIT ?)",
                arguments: [now, max(limit, 0)])
            return db.changesCount
        }
    }
}
