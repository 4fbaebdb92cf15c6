import ArgumentParser
import Foundation
import Hummingbird
import PostgresNIO
import RunwayExamples
import RunwayServer

/// `runway serve`: run the demo server, with the operation-log collector, until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the demo server and the operation-log collector on 127.0.0.1 (an ephemeral port) until interrupted."
    )

    @Flag(help: "Do not log each request (for benchmarks).")
    var quiet = false

    @Option(help: "The collector's SQLite file (default: a file in the temporary folder).")
    var collectorDatabase: String?

    @Option(help: "Keep collected events in PostgreSQL instead, such as postgres://runway@127.0.0.1:5432/runway.")
    var postgres: String?

    func run() async throws {
        let store: any OperationLogStore
        var database: PostgresCollectorDatabase?
        let storeDescription: String
        if let postgres {
            let connected = try await PostgresCollectorDatabase.connect(try Self.postgresConfiguration(postgres))
            database = connected
            store = PostgresOperationLogStore(database: connected)
            storeDescription = postgres
        } else {
            let path = collectorDatabase
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("runway-collector-\(getpid()).sqlite").path
            store = try SQLiteOperationLogStore(url: URL(fileURLWithPath: path))
            storeDescription = path
        }
        // `/signed/echo/…` verifies the demo key, so `runway demo --server` can show signing.
        let verifier = SignatureVerifier<BasicRequestContext>(keys: [DemoSigningKey.keyID: [DemoSigningKey.secret]])
        let server = try await DemoServer.start(
            signatureVerifier: verifier, verifiesEverything: false, collector: OperationLogCollector(store: store),
            logLevel: quiet ? .critical : .info)
        // Written unbuffered: a parent process reading the address through a pipe gets it now.
        var banner = "Runway demo server at \(server.baseURL) — Ctrl-C to stop\n"
        banner += "Operation-log collector at \(server.baseURL)/oplog/batches, events in \(storeDescription)\n"
        if !quiet {
            banner += "Routes:\n" + DemoServer.routes.map { "  \($0)\n" }.joined()
            banner += "Try: swift run runway demo --server \(server.baseURL)\n"
        }
        FileHandle.standardOutput.write(Data(banner.utf8))
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
        await server.stop()
        await database?.close()
    }

    /// `postgres://user[:password]@host[:port]/database` as a client configuration (no TLS: a
    /// database on this machine or a private network).
    static func postgresConfiguration(_ url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, let user = components.user
        else { throw ValidationError("\(url) is not a postgres://user@host:port/database URL") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
    }
}
