public import Foundation
import GRDB

/// The embedded collector store: one SQLite file through GRDB (WAL), for `runway serve` and the
/// tests.
public final class SQLiteOperationLogStore: OperationLogStore {
    private let pool: DatabasePool

    /// Opens (creating if needed) the store at `url`.
    public init(url: URL) throws {
        pool = try SQLiteFile.open(
            url,
            schema: """
                    CREATE TABLE collected_event (
                        event_id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        time_ms INTEGER NOT NULL,
                        payload TEXT NOT NULL,
                        received_ms INTEGER NOT NULL,
                        clock_offset_ms INTEGER
                    ) WITHOUT ROWID
                """)
    }

    /// - throws: ``OperationLogStoreError/refused(reason:)`` when SQLite refuses a value (a
    ///   constraint, a type or a size); nothing of the batch is stored then.
    public func store(_ events: [CollectedEvent]) async throws -> StoredBatch {
        let received = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            return try await pool.write { db in
                // Only a repeated id is a duplicate: `INSERT OR IGNORE` would also skip a row that a
                // NOT NULL or CHECK constraint refuses, and count it as one (acknowledged, lost).
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT INTO collected_event (event_id, name, time_ms, payload, received_ms, clock_offset_ms)
                        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(event_id) DO NOTHING
                """)
                var new = 0
                for event in events {
                    try statement.execute(arguments: [
                        event.id, event.name, event.timeMilliseconds, String(decoding: event.payload, as: UTF8.self), received,
                        event.clockOffsetMilliseconds,
                    ])
                    new += db.changesCount
                }
                return StoredBatch(new: new, duplicates: events.count - new)
            }
        } catch let error as DatabaseError where Self.refusesData(error.resultCode) {
            throw OperationLogStoreError.refused(reason: error.message ?? "\(error.resultCode)")
        }
    }

    /// SQLite's answers about a value rather than about the database.
    private static func refusesData(_ code: ResultCode) -> Bool {
        [.SQLITE_CONSTRAINT, .SQLITE_TOOBIG, .SQLITE_MISMATCH, .SQLITE_RANGE].contains(code.primaryResultCode)
    }

    public func clockOffsets() async throws -> [String: Int64?] {
        try await pool.read { db in
            var offsets: [String: Int64?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT event_id, clock_offset_ms FROM collected_event") {
                offsets[try row.decode(String.self, atIndex: 0)] = try row.decode(Int64?.self, atIndex: 1)
            }
            return offsets
        }
    }

    public func summary(limit: Int, offset: Int) async throws -> CollectorSummary {
        try await pool.read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM collected_event") ?? 0
            let rows = try Row.fetchAll(
                db, sql: "SELECT name, count(*) AS n FROM collected_event GROUP BY name ORDER BY n DESC, name LIMIT ? OFFSET ?",
                arguments: [max(limit, 0), max(offset, 0)])
            let byName = try rows.map { (name: try $0.decode(String.self, atIndex: 0), count: try $0.decode(Int.self, atIndex: 1)) }
            return CollectorSummary(events: total, byName: byName)
        }
    }

    public func checkReachable() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func allEventIDs() async throws -> [String] {
        try await pool.read { db in try String.fetchAll(db, sql: "SELECT event_id FROM collected_event") }
    }
}
