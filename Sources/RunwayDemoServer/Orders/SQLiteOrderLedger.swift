public import Foundation
import GRDB
import RunwayServer

/// The demo's orders in one SQLite file (WAL).
public final class SQLiteOrderLedger: OrderLedger {
    private let pool: DatabasePool

    /// The table as the first version made it: unique by key alone. A file made then is brought
    /// up to date by the migrations after it.
    package static let firstSchema = """
        CREATE TABLE demo_order (
            number INTEGER PRIMARY KEY AUTOINCREMENT,
            key TEXT NOT NULL UNIQUE,
            queue TEXT NOT NULL,
            position INTEGER NOT NULL
        )
        """

    /// Opens (creating if needed) the ledger at `url`.
    public init(url: URL) throws {
        pool = try SQLiteFile.open(
            url, schema: Self.firstSchema,
            later: [
                // Keys are each client's: the table again, unique by client and key.
                """
                CREATE TABLE demo_order_by_client (
                    number INTEGER PRIMARY KEY AUTOINCREMENT,
                    client TEXT NOT NULL,
                    key TEXT NOT NULL,
                    queue TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    UNIQUE (client, key)
                );
                INSERT INTO demo_order_by_client (number, client, key, queue, position)
                    SELECT number, '', key, queue, position FROM demo_order;
                DROP TABLE demo_order;
                ALTER TABLE demo_order_by_client RENAME TO demo_order;
                """
            ])
    }

    public func apply(client: String, key: String, queue: String, position: Int64) async throws -> (number: Int64, applied: Bool) {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO demo_order (client, key, queue, position) VALUES (?, ?, ?, ?) ON CONFLICT(client, key) DO NOTHING",
                arguments: [client, key, queue, position])
            let applied = db.changesCount == 1
            let number = try Int64.fetchOne(
                db, sql: "SELECT number FROM demo_order WHERE client = ? AND key = ?", arguments: [client, key]) ?? 0
            return (number, applied)
        }
    }

    public func orders() async throws -> [AppliedOrder] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT number, key, queue, position FROM demo_order ORDER BY number").map {
                AppliedOrder(
                    number: try $0.decode(atIndex: 0), key: try $0.decode(atIndex: 1), queue: try $0.decode(atIndex: 2),
                    position: try $0.decode(atIndex: 3))
            }
        }
    }
}
