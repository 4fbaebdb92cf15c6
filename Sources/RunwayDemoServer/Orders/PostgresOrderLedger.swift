import PostgresNIO
public import RunwayServer

/// The demo's orders in PostgreSQL, for several `runway serve` processes (and restarts) on one
/// database.
public final class PostgresOrderLedger: OrderLedger {
    private let database: PostgresCollectorDatabase

    /// A ledger over `database`; its table is made here if missing, and a table of an earlier
    /// version (unique by key alone) is made unique by client and key.
    public static func open(_ database: PostgresCollectorDatabase) async throws -> PostgresOrderLedger {
        try await database.client.query(
            """
            CREATE TABLE IF NOT EXISTS demo_order (
                number BIGSERIAL PRIMARY KEY,
                client TEXT NOT NULL DEFAULT '',
                key TEXT NOT NULL,
                queue TEXT NOT NULL,
                position BIGINT NOT NULL
            )
            """, logger: database.logger)
        try await database.client.query(
            "ALTER TABLE demo_order ADD COLUMN IF NOT EXISTS client TEXT NOT NULL DEFAULT ''", logger: database.logger)
        try await database.client.query(
            "ALTER TABLE demo_order DROP CONSTRAINT IF EXISTS demo_order_key_key", logger: database.logger)
        try await database.client.query(
            "CREATE UNIQUE INDEX IF NOT EXISTS demo_order_client_key ON demo_order (client, key)", logger: database.logger)
        return PostgresOrderLedger(database: database)
    }

    private init(database: PostgresCollectorDatabase) { self.database = database }

    public func apply(client: String, key: String, queue: String, position: Int64) async throws -> (number: Int64, applied: Bool) {
        let inserted = try await database.client.query(
            """
            INSERT INTO demo_order (client, key, queue, position) VALUES (\(client), \(key), \(queue), \(position))
            ON CONFLICT (client, key) DO NOTHING RETURNING number
            """, logger: database.logger)
        for try await number in inserted.decode(Int64.self) { return (number, true) }
        let existing = try await database.client.query(
            "SELECT number FROM demo_order WHERE client = \(client) AND key = \(key)", logger: database.logger)
        for try await number in existing.decode(Int64.self) { return (number, false) }
        return (0, false)
    }

    public func orders() async throws -> [AppliedOrder] {
        let rows = try await database.client.query(
            "SELECT number, key, queue, position FROM demo_order ORDER BY number", logger: database.logger)
        var orders: [AppliedOrder] = []
        for try await (number, key, queue, position) in rows.decode((Int64, String, String, Int64).self) {
            orders.append(AppliedOrder(number: number, key: key, queue: queue, position: position))
        }
        return orders
    }
}
