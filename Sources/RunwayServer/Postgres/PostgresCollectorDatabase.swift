import Foundation
import NIOSSL
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
    package let logger: Logger

    private init(client: PostgresClient, running: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.running = running
        self.logger = logger
    }

    /// The database did not accept a connection within the time given to ``connect(_:logger:timeout:)``
    /// (the pool goes on trying a server that refuses, or a TLS handshake that fails, rather than
    /// failing the first query): not reachable, refused, or TLS not agreed. The client's log at
    /// `warning` says which.
    public struct Unreachable: Error, Sendable, CustomStringConvertible {
        /// How long it was given.
        public var timeout: Duration
        public var description: String {
            "PostgreSQL did not accept a connection within \(timeout): not reachable, refused, or TLS not agreed"
        }
    }

    /// Connects and makes sure the collector's tables exist, giving up after `timeout`.
    ///
    /// - throws: `PSQLError` when the server refuses the statements; ``Unreachable`` when no
    ///   connection was made within `timeout`.
    public static func connect(
        _ configuration: PostgresClient.Configuration, logger: Logger = Logger(label: "runway.postgres"),
        timeout: Duration = .seconds(30)
    ) async throws -> PostgresCollectorDatabase {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        let database = PostgresCollectorDatabase(client: client, running: running, logger: logger)
        // Either the tables are made, or the time runs out and the client is stopped — without
        // waiting for the request for a connection to notice: beside a busy test suite PostgresNIO
        // never failed seven such requests after their client had been stopped.
        do {
            try await TimeBound.run(within: timeout) { try await database.createTables() }
            return database
        } catch is TimeBound.TimedOut {
            running.cancel()
            throw Unreachable(timeout: timeout)
        } catch {
            running.cancel()
            throw error
        }
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
                // Whose each nonce is, for the quotas (``NonceQuota``); a table from before has
                // rows of no one, which count against no quota and expire as before.
                try await connection.query(
                    "ALTER TABLE signature_nonce ADD COLUMN IF NOT EXISTS key_holder TEXT, ADD COLUMN IF NOT EXISTS device_holder TEXT",
                    logger: logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS signature_nonce_key ON signature_nonce (key_holder, expiry_ms)", logger: logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS signature_nonce_device ON signature_nonce (device_holder, expiry_ms)",
                    logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS idempotency_key (
                        key TEXT PRIMARY KEY,
                        fingerprint TEXT NOT NULL,
                        lease_until_ms BIGINT NOT NULL,
                        answer BYTEA,
                        expiry_ms BIGINT
                    )
                    """, logger: logger)
                try await connection.query(
                    "CREATE INDEX IF NOT EXISTS idempotency_key_expiry ON idempotency_key (expiry_ms)", logger: logger)
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

    /// Why a URL is not a PostgreSQL URL Runway can connect by.
    public struct URLError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// `postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…]` as a client
    /// configuration. `sslmode` as libpq reads it: `disable` (the default), `require` (encrypted,
    /// the certificate not checked), `verify-ca` (checked against the CA file `sslrootcert`),
    /// `verify-full` (and the host checked against the certificate's names).
    ///
    /// - throws: ``URLError`` saying what is wrong: not such a URL, another `sslmode`, or a
    ///   verifying mode without a readable `sslrootcert`.
    public static func configuration(url: String) throws(URLError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, let user = components.user
        else { throw URLError(description: "\(url) is not a postgres://user@host:port/database URL") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let query = components.queryItems ?? []
        let mode = query.last { $0.name == "sslmode" }?.value ?? "disable"
        let rootCertificate = query.last { $0.name == "sslrootcert" }?.value
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable":
            tls = .disable
        case "require":
            tlsConfiguration.certificateVerification = .none
            tls = .require(tlsConfiguration)
        case "verify-ca", "verify-full":
            guard let rootCertificate else { throw URLError(description: "sslmode=\(mode) needs sslrootcert=CA.pem") }
            guard FileManager.default.isReadableFile(atPath: rootCertificate) else {
                throw URLError(description: "sslrootcert \(rootCertificate) cannot be read")
            }
            tlsConfiguration.trustRoots = .file(rootCertificate)
            tlsConfiguration.certificateVerification = mode == "verify-full" ? .fullVerification : .noHostnameVerification
            tls = .require(tlsConfiguration)
        default:
            throw URLError(description: "sslmode=\(mode): Runway takes disable, require, verify-ca or verify-full")
        }
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: tls)
    }
}
