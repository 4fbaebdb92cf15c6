import Foundation
import GRDB
import Testing
@testable import RunwayStorage

@Suite("SQLite databases in a role", .timeLimit(.minutes(10)))
struct StorageDatabaseTests {
    @Test("a database opens in its role, in WAL mode, with migrations applied")
    func opens() throws {
        let root = try TemporaryRoot()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "entry") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("body", .text).notNull()
            }
        }
        let pool = try StorageDatabase.open("queue/ops.sqlite", in: .applicationSupport, of: root.container, migrator: migrator)
        try pool.write { db in try db.execute(sql: "INSERT INTO entry (body) VALUES (?)", arguments: ["hello"]) }
        let mode = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") } == 1)
        #expect(FileSystem.exists(root.url.appendingPathComponent("Library/Application Support/queue/ops.sqlite")))
    }
}
