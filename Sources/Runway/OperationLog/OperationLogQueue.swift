import Foundation
import GRDB
import Logging
import RunwayStorage

/// The operation log's queue on disk: one SQLite database (WAL, a sync per commit) in its own
/// folder of application support, excluded from backups so that a restored device does not send
/// old events again.
///
/// An event is pending until a batch claims it; a claimed batch keeps its key until the
/// collector acknowledges it, across relaunches, so a batch sent again is the same batch.
final class OperationLogQueue: Sendable {
    /// The state the uploader decides on.
    struct State: Sendable {
        /// Events not in a batch.
        var pending: Int
        /// When the oldest of them was queued, in milliseconds since 1970.
        var oldestQueued: Int64?
        /// The key of the batch claimed and not yet acknowledged, if any.
        var claimedBatch: String?
        /// The lowest sequence number still queued (claimed or not).
        var lowestSequence: Int64?
        /// The highest sequence number ever queued.
        var highestSequence: Int64
        /// When the oldest queued event (claimed or not) was queued.
        var lowestQueuedAt: Int64?
    }

    /// A claimed batch.
    struct Batch: Sendable {
        var key: String
        var events: [OperationEvent]
    }

    /// Counts kept with the queue.
    struct Tally: Sendable, Hashable {
        var pending = 0
        var claimed = 0
        var uploaded = 0
        var dropped = 0
    }

    static let folder = "operation-log"

    let pool: DatabasePool
    let url: URL
    private let capacity: Int

    /// Opens the queue in `container`; a database SQLite calls corrupt (or not a database) is moved
    /// aside and the queue starts again empty, with one log line.
    init(container: Container, name: String, capacity: Int, logger: Logger) throws(OperationLogError) {
        self.capacity = capacity
        let path = "\(Self.folder)/\(name)"
        do {
            url = try container.url(for: path, in: .applicationSupport)
            try BackupExclusion.exclude(url.deletingLastPathComponent())
        } catch {
            throw .storage(reason: "\(error)")
        }
        do {
            pool = try Self.open(path, container: container)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            let aside = url.path + ".corrupt-\(Int64(Date().timeIntervalSince1970 * 1000))"
            logger.error(
                "operation log queue is damaged; moved aside and started again",
                metadata: ["path": "\(url.path)", "movedTo": "\(aside)", "reason": "\(error.message ?? "\(error.resultCode)")"])
            for suffix in ["", "-wal", "-shm"] {
                let from = url.path + suffix
                if FileManager.default.fileExists(atPath: from) {
                    try? FileManager.default.moveItem(atPath: from, toPath: aside + suffix)
                }
            }
            do {
                pool = try Self.open(path, container: container)
            } catch {
                throw .storage(reason: "\(error)")
            }
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    private static func open(_ path: String, container: Container) throws -> DatabasePool {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE event (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        name TEXT NOT NULL,
                        time_ms INTEGER NOT NULL,
                        payload BLOB NOT NULL,
                        queued_ms INTEGER NOT NULL,
                        batch TEXT
                    );
                    CREATE INDEX event_batch ON event(batch);
                    CREATE TABLE tally (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    """)
        }
        let pool = try StorageDatabase.open(path, in: .applicationSupport, of: container, migrator: migrator)
        // Reading the schema makes SQLite look at the file: a damaged one fails here, not later.
        _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        return pool
    }

    /// Commits `events` in one transaction, then drops the oldest unclaimed events beyond the
    /// capacity.
    ///
    /// - returns: How many events were dropped to make room.
    func insert(_ events: [OperationEvent]) async throws -> Int {
        let capacity = capacity
        let queued = Int64(Date().timeIntervalSince1970 * 1000)
        return try await pool.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO event (id, name, time_ms, payload, queued_ms) VALUES (?, ?, ?, ?, ?)")
            for event in events {
                try statement.execute(arguments: [event.id, event.name, event.timeMilliseconds, event.payload, queued])
            }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM event") ?? 0
            guard count > capacity else { return 0 }
            try db.execute(
                sql: "DELETE FROM event WHERE seq IN (SELECT seq FROM event WHERE batch IS NULL ORDER BY seq LIMIT ?)",
                arguments: [count - capacity])
            let dropped = db.changesCount
            try Self.add(dropped, to: "dropped", in: db)
            return dropped
        }
    }

    /// The highest sequence number queued so far, read at once: what an earlier run left.
    func highestSequence() throws -> Int64 {
        try pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT max(seq) FROM event") ?? 0
        }
    }

    func state() async throws -> State {
        try await pool.read { db in
            let pending = try Row.fetchOne(
                db, sql: "SELECT count(*), min(queued_ms) FROM event WHERE batch IS NULL")
            let bounds = try Row.fetchOne(db, sql: "SELECT min(seq), min(queued_ms) FROM event")
            let highest = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event'") ?? 0
            return State(
                pending: pending?[0] ?? 0, oldestQueued: pending?[1],
                claimedBatch: try String.fetchOne(db, sql: "SELECT batch FROM event WHERE batch IS NOT NULL LIMIT 1"),
                lowestSequence: bounds?[0], highestSequence: highest, lowestQueuedAt: bounds?[1])
        }
    }

    /// The batch already claimed, or up to `limit` of the oldest pending events claimed now under
    /// a new key; `nil` when nothing is queued.
    func claim(limit: Int) async throws -> Batch? {
        try await pool.write { db in
            var key = try String.fetchOne(db, sql: "SELECT batch FROM event WHERE batch IS NOT NULL LIMIT 1")
            if key == nil {
                let fresh = UUID().uuidString.lowercased()
                try db.execute(
                    sql: "UPDATE event SET batch = ? WHERE seq IN (SELECT seq FROM event WHERE batch IS NULL ORDER BY seq LIMIT ?)",
                    arguments: [fresh, limit])
                guard db.changesCount > 0 else { return nil }
                key = fresh
            }
            guard let key else { return nil }
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, name, time_ms, payload FROM event WHERE batch = ? ORDER BY seq", arguments: [key])
            let events = rows.map { row in
                OperationEvent(id: row[0], name: row[1], timeMilliseconds: row[2], payload: row[3])
            }
            return Batch(key: key, events: events)
        }
    }

    /// Removes the acknowledged batch `key`.
    func acknowledge(_ key: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM event WHERE batch = ?", arguments: [key])
            try Self.add(db.changesCount, to: "uploaded", in: db)
        }
    }

    func tally() async throws -> Tally {
        try await pool.read { db in
            var tally = Tally()
            tally.pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM event WHERE batch IS NULL") ?? 0
            tally.claimed = try Int.fetchOne(db, sql: "SELECT count(*) FROM event WHERE batch IS NOT NULL") ?? 0
            tally.uploaded = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'uploaded'") ?? 0
            tally.dropped = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'dropped'") ?? 0
            return tally
        }
    }

    private static func add(_ amount: Int, to key: String, in db: Database) throws {
        guard amount > 0 else { return }
        try db.execute(
            sql: "INSERT INTO tally (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
            arguments: [key, amount])
    }
}
