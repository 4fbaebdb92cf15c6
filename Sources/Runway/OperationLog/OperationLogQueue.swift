import Foundation
import GRDB
import Logging
import RunwayStorage

/// The operation log's queue on disk: a ``QueueDatabase`` in its own folder of application
/// support.
///
/// An event is pending until a batch claims it; a claimed batch keeps its key until the
/// collector answers it for good, across relaunches, so a batch sent again is the same batch.
/// A batch that changes (split after a 413) gets a new key.
///
/// Times in the queue (when an event was queued, until when uploads wait) are on the
/// ``BootClock``, never the wall clock; on opening in another boot they are reset to now,
/// which makes everything left a leftover that is due at once.
final class OperationLogQueue: Sendable {
    /// The state the uploader decides on.
    struct State: Sendable {
        /// Events not in a batch.
        var pending: Int
        /// When the oldest of them was queued, in ``BootClock`` milliseconds.
        var oldestQueued: Int64?
        /// The keys of the batches claimed and not yet answered.
        var claimedBatches: Set<String>
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
        /// Failed uploads of this batch so far, across relaunches.
        var attempts: Int
    }

    /// Counts kept with the queue.
    struct Tally: Sendable, Hashable {
        var pending = 0
        var claimed = 0
        var uploaded = 0
        var dropped = 0
        var refused = 0
        var abandoned = 0
        var unreadable = 0
    }

    /// How a batch left the queue without being stored.
    enum Loss: String {
        /// The collector refused its events for good.
        case refused
        /// It failed ``OperationLog/Policy/maximumAttempts`` times.
        case abandoned
        /// Its row could not be read (a damaged or tampered file).
        case unreadable
    }

    static let folder = "operation-log"

    let pool: DatabasePool
    let url: URL
    private let capacity: Int
    private let logger: Logger

    /// Opens the queue in `container` (see ``QueueDatabase``).
    init(container: Container, name: String, capacity: Int, logger: Logger) throws(OperationLogError) {
        self.capacity = capacity
        self.logger = logger
        do {
            (pool, url) = try QueueDatabase.open(
                folder: Self.folder, name: name, container: container, what: "operation log queue", logger: logger,
                schema: Self.schema
            ) { db in
                // Boot-clock times from another boot mean nothing now: reset them to now.
                try db.execute(sql: "UPDATE event SET queued_ms = ?", arguments: [BootClock.nowMilliseconds()])
                try db.execute(sql: "DELETE FROM meta WHERE key = 'not_before_ms'")
            }
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    private static let schema = """
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
                CREATE TABLE batch (key TEXT PRIMARY KEY, attempts INTEGER NOT NULL DEFAULT 0);
        """

    /// Commits `events` in one transaction, then drops the oldest unclaimed events beyond the
    /// capacity.
    ///
    /// - returns: How many events were dropped to make room.
    func insert(_ events: [OperationEvent]) async throws -> Int {
        let capacity = capacity
        let queued = BootClock.nowMilliseconds()
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
            // Events are queued in sequence with times that never decrease (one boot clock, one
            // writer; a reset gives them all one time): the oldest is the first by sequence, which
            // the indexes find without reading the table.
            let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM event WHERE batch IS NULL") ?? 0
            let oldestPending = try Int64.fetchOne(
                db, sql: "SELECT queued_ms FROM event WHERE batch IS NULL ORDER BY seq LIMIT 1")
            let lowest = try Row.fetchOne(db, sql: "SELECT seq, queued_ms FROM event ORDER BY seq LIMIT 1")
            let highest = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event'") ?? 0
            return State(
                pending: pending, oldestQueued: oldestPending,
                claimedBatches: Set(try String.fetchAll(db, sql: "SELECT DISTINCT batch FROM event WHERE batch IS NOT NULL")),
                lowestSequence: lowest?[0], highestSequence: highest, lowestQueuedAt: lowest?[1])
        }
    }

    /// The oldest batch already claimed and not in `excluding` (the uploads in flight), or the
    /// oldest pending events claimed now under a new key: up to `limit` of them and, past the
    /// first, up to `byteBudget` bytes of names and payloads. `nil` when nothing is left.
    ///
    /// Events whose rows cannot be read leave the queue, counted (``Loss/unreadable``) and
    /// logged: a damaged row must not stop every upload after it. A batch left with none to
    /// send is removed, and the next claimed.
    func claim(limit: Int, byteBudget: Int, excluding: Set<String> = []) async throws -> Batch? {
        let logger = logger
        return try await pool.write { db in
            while let key = try Self.claimKey(limit: limit, byteBudget: byteBudget, excluding: excluding, in: db) {
                let batch = try Self.batch(key, in: db, logger: logger)
                if !batch.events.isEmpty { return batch }
                try db.execute(sql: "DELETE FROM batch WHERE key = ?", arguments: [key])
            }
            return nil
        }
    }

    /// The key of the oldest claimed batch not in `excluding`, or of the pending events claimed
    /// now (``claim(limit:byteBudget:excluding:)``); `nil` when nothing is left.
    private static func claimKey(limit: Int, byteBudget: Int, excluding: Set<String>, in db: Database) throws -> String? {
        // A batch key that is not text (a tampered file) reads back as other text, which matches
        // none of its events: they would never be sent. They go back to the pending ones, to be
        // claimed under a new key.
        try db.execute(sql: "UPDATE event SET batch = NULL WHERE batch IS NOT NULL AND typeof(batch) != 'text'")
        var key = try String.fetchAll(
            db, sql: "SELECT batch FROM event WHERE batch IS NOT NULL GROUP BY batch ORDER BY min(seq)"
        ).first { !excluding.contains($0) }
        if key == nil {
            let sizes = try Row.fetchAll(
                db, sql: "SELECT seq, length(name) + length(payload) FROM event WHERE batch IS NULL ORDER BY seq LIMIT ?",
                arguments: [max(limit, 1)])
            var last: Int64?
            var bytes = 0
            for row in sizes {
                let size: Int = try row.decode(atIndex: 1)
                if last != nil, bytes + size > byteBudget { break }
                bytes += size
                last = try row.decode(atIndex: 0)
            }
            guard let last else { return nil }
            let fresh = UUID().uuidString.lowercased()
            try db.execute(
                sql: "UPDATE event SET batch = ? WHERE batch IS NULL AND seq <= ?", arguments: [fresh, last])
            try db.execute(sql: "INSERT OR REPLACE INTO batch (key, attempts) VALUES (?, 0)", arguments: [fresh])
            key = fresh
        }
        return key
    }

    /// Batch `key`'s events; those whose rows cannot be read are removed, counted and logged.
    private static func batch(_ key: String, in db: Database, logger: Logger) throws -> Batch {
        let rows = try Row.fetchAll(
            db, sql: "SELECT seq, id, name, time_ms, payload FROM event WHERE batch = ? ORDER BY seq", arguments: [key])
        var events: [OperationEvent] = []
        var unreadable: [Int64] = []
        for row in rows {
            // GRDB's throwing decode: its subscripts trap on a value of another type (a tampered file).
            do {
                events.append(
                    OperationEvent(
                        id: try row.decode(atIndex: 1), name: try row.decode(atIndex: 2),
                        timeMilliseconds: try row.decode(atIndex: 3), payload: try row.decode(atIndex: 4)))
            } catch {
                // `seq` is the row id: SQLite keeps nothing but an integer there.
                let seq: Int64 = try row.decode(atIndex: 0)
                unreadable.append(seq)
                logger.error(
                    "operation log: an event's row could not be read; it is removed",
                    metadata: ["seq": "\(seq)", "error": "\(error)"])
            }
        }
        for seq in unreadable { try db.execute(sql: "DELETE FROM event WHERE seq = ?", arguments: [seq]) }
        try add(unreadable.count, to: Loss.unreadable.rawValue, in: db)
        let attempts = try Int.fetchOne(db, sql: "SELECT attempts FROM batch WHERE key = ?", arguments: [key]) ?? 0
        return Batch(key: key, events: events, attempts: attempts)
    }

    /// Keeps the first `count` events of batch `key` under a new key (a batch that changed is
    /// a new request) and returns the rest to the pending events, in their places.
    func split(_ key: String, keeping count: Int) async throws -> Batch {
        try await pool.write { db in
            let fresh = UUID().uuidString.lowercased()
            try db.execute(
                sql: """
                    UPDATE event SET batch = CASE
                        WHEN seq IN (SELECT seq FROM event WHERE batch = ?1 ORDER BY seq LIMIT ?2) THEN ?3
                        ELSE NULL END
                    WHERE batch = ?1
                    """,
                arguments: [key, max(count, 1), fresh])
            try db.execute(sql: "DELETE FROM batch WHERE key = ?", arguments: [key])
            try db.execute(sql: "INSERT INTO batch (key, attempts) VALUES (?, 0)", arguments: [fresh])
            let batch = try Self.batch(fresh, in: db, logger: logger)
            if batch.events.isEmpty { try db.execute(sql: "DELETE FROM batch WHERE key = ?", arguments: [fresh]) }
            return batch
        }
    }

    /// Counts one more failed upload of batch `key`; returns the count.
    func recordFailure(_ key: String) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO batch (key, attempts) VALUES (?, 1) ON CONFLICT(key) DO UPDATE SET attempts = attempts + 1",
                arguments: [key])
            return try Int.fetchOne(db, sql: "SELECT attempts FROM batch WHERE key = ?", arguments: [key]) ?? 1
        }
    }

    /// Removes the answered batch `key`: its events count as uploaded, but for `refused` of
    /// them, which the collector refused for good.
    func acknowledge(_ key: String, refused: Int = 0) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM event WHERE batch = ?", arguments: [key])
            let removed = db.changesCount
            try db.execute(sql: "DELETE FROM batch WHERE key = ?", arguments: [key])
            let lost = min(max(refused, 0), removed)
            try Self.add(removed - lost, to: "uploaded", in: db)
            try Self.add(lost, to: Loss.refused.rawValue, in: db)
        }
    }

    /// Removes batch `key` without it being stored, counted as `loss`.
    func drop(_ key: String, as loss: Loss) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM event WHERE batch = ?", arguments: [key])
            let removed = db.changesCount
            try db.execute(sql: "DELETE FROM batch WHERE key = ?", arguments: [key])
            try Self.add(removed, to: loss.rawValue, in: db)
        }
    }

    /// Until when, in ``BootClock`` milliseconds, uploads wait (a back-off the collector asked
    /// for survives a relaunch in the same boot); `nil` clears it.
    func setNotBefore(_ milliseconds: Int64?) async throws {
        try await pool.write { db in
            if let milliseconds {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('not_before_ms', ?)", arguments: [milliseconds])
            } else {
                try db.execute(sql: "DELETE FROM meta WHERE key = 'not_before_ms'")
            }
        }
    }

    /// The wait stored by ``setNotBefore(_:)``, read at once.
    func notBefore() throws -> Int64? {
        try pool.read { db in try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'not_before_ms'") }
    }

    func tally() async throws -> Tally {
        try await pool.read { db in
            var tally = Tally()
            tally.pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM event WHERE batch IS NULL") ?? 0
            tally.claimed = try Int.fetchOne(db, sql: "SELECT count(*) FROM event WHERE batch IS NOT NULL") ?? 0
            tally.uploaded = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'uploaded'") ?? 0
            tally.dropped = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'dropped'") ?? 0
            tally.refused = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'refused'") ?? 0
            tally.abandoned = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'abandoned'") ?? 0
            tally.unreadable = try Int.fetchOne(db, sql: "SELECT value FROM tally WHERE key = 'unreadable'") ?? 0
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
