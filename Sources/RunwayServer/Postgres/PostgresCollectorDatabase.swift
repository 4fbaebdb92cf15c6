import Foundation
public import Logging
public import PostgresNIO

/// A pooled connection to the PostgreSQL database several collector processes share: it runs
/// the client, and creates the collector's tables once (under an advisory lock, so processes
/// starting together do not race).
///
/// For example:
///
/// ```swift
/// let database = try await PostgresCollectorDatabase.connect(
///     .init(host: "127.0.0.1", port: 5432, username: "runway", password: nil, database: "runway", tls: .disable))
/// let store = PostgresOperationLogStore(database: database)
/// let nonces = PostgresNonceStore(database: database)
/// ```
public final class PostgresCollectorDatabase: Sendable {
    /// The pooled client.
    public let client: PostgresClient
    private let running: Task<Void, Never>
    let logger: Logger

    private init(client: PostgresClient, running: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.running = running
        self.logger = logger
    }

    /// Connects and makes sure the collector's tables exist.
    ///
    /// - throws: `PSQLError` when the server cannot be reached or refuses the statements.
    public static func connect(
        _ configuration: PostgresClient.Configuration, logger: Logger = Logger(label: "runway.postgres")
    ) async throws -> PostgresCollectorDatabase {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        let database = PostgresCollectorDatabase(client: client, running: running, logger: logger)
        do {
            try await database.createTables()
        } catch {
            running.cancel()
            throw error
        }
        return database
    }

    private func createTables() async throws {
        try await client.withConnection { connection in
            // Any constant shared by every collector process: the key of the schema lock.
            try await connection.query("SELECT pg_advisory_lock(727200)", logger: logger)
            do {
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS collected_event (
                        event_id TEXT PRIMARY KEY,
                        name TEXT NOT NULL,
                        time_ms BIGINT NOT NULL,
                        payload JSONB NOT NULL,
                        received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                        clock_offset_ms BIGINT
                    )
                    """, logger: logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS signature_nonce (nonce TEXT PRIMARY KEY, expiry_ms BIGINT NOT NULL)",
                    logger: logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS signature_nonce_expiry ON signature_nonce (expiry_ms)", logger: logger)
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(727200)", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(727200)", logger: logger)
        }
    }

    /// Stops the client; queries afterwards fail.
    public func close() async {
        running.cancel()
        await running.value
    }
}
