import Foundation
import GRDB

/// The embedded stores' SQLite files (the collector's, the idempotency keys', the demo's
/// orders): WAL, so readers never wait for the writer, and one migration that makes the schema.
package enum SQLiteFile {
    /// Opens (creating if needed) the database at `url` with `schema` as its first migration and
    /// `later` as the migrations after it, in order (a file made by an earlier version gets only
    /// those it lacks).
    package static func open(_ url: URL, schema: String, later: [String] = []) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.journalMode = .wal
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: schema) }
        for (index, migration) in later.enumerated() {
            migrator.registerMigration("v\(index + 2)") { db in try db.execute(sql: migration) }
        }
        try migrator.migrate(pool)
        return pool
    }
}
