import Foundation
import GRDB
import Logging
import RunwayStorage

/// A queue that must outlive the process — the operation log's events, the outbox's
/// mutations — kept in one SQLite database (WAL, a sync per commit) in a folder of its own in
/// application support, excluded from backups so that a restored device does not send old work
/// again.
///
/// A database SQLite calls corrupt (or not a database) is moved aside and the queue starts
/// again empty, with one log line: a damaged file must not stop the app. Times kept on the
/// ``BootClock`` mean nothing in another boot: on the first opening of each boot `newBoot`
/// resets them in the same transaction that records the boot.
enum QueueDatabase {
    /// Opens (or makes) `folder/name` in `container`'s application support.
    ///
    /// - parameters:
    ///   - what: The queue's name in the log line of a damaged file ("operation log queue").
    ///   - schema: The queue's tables, made by the first migration beside a `meta (key, value)`
    ///     table of the queue's own and this type's.
    ///   - newBoot: Resets the boot-clock times, once per boot.
    /// - returns: The database and its file.
    static func open(
        folder: String, name: String, container: Container, what: String, logger: Logger,
        schema: String, newBoot: @escaping @Sendable (Database) throws -> Void
    ) throws -> (DatabasePool, URL) {
        let path = "\(folder)/\(name)"
        let url = try container.url(for: path, in: .applicationSupport)
        // Excluded again at every opening: a marker lost to a power cut is written anew then.
        try BackupExclusion.exclude(url.deletingLastPathComponent(), durable: false)
        do {
            return (try open(path, container: container, schema: schema, newBoot: newBoot), url)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            let aside = url.path + ".corrupt-\(Int64(Date().timeIntervalSince1970 * 1000))"
            logger.error(
                "\(what) is damaged; moved aside and started again",
                metadata: ["path": "\(url.path)", "movedTo": "\(aside)", "reason": "\(error.message ?? "\(error.resultCode)")"])
            for suffix in ["", "-wal", "-shm"] {
                let from = url.path + suffix
                if FileManager.default.fileExists(atPath: from) {
                    try? FileManager.default.moveItem(atPath: from, toPath: aside + suffix)
                }
            }
            return (try open(path, container: container, schema: schema, newBoot: newBoot), url)
        }
    }

    private static func open(
        _ path: String, container: Container, schema: String,
        newBoot: @escaping @Sendable (Database) throws -> Void
    ) throws -> DatabasePool {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: schema)
            try db.execute(sql: "CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
        }
        let pool = try StorageDatabase.open(path, in: .applicationSupport, of: container, migrator: migrator)
        // Reading the schema makes SQLite look at the file: a damaged one fails here, not later.
        _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        try pool.write { db in
            guard try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'boot'") != BootClock.bootID else { return }
            try newBoot(db)
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('boot', ?)", arguments: [BootClock.bootID])
        }
        return pool
    }
}
