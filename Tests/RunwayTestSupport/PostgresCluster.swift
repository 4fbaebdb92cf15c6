import Foundation
import PostgresNIO
import RunwayServer

/// A throwaway PostgreSQL cluster for one test: `initdb` into a temporary folder, `pg_ctl start`
/// on a free loopback port, `pg_ctl stop -m immediate` and the folder removed at the end.
///
/// PostgreSQL refuses to run as root, so as root its programs run as the `postgres` user (which
/// Debian's `postgresql` package creates; `Scripts/test` installs it) through `runuser`.
public struct PostgresCluster: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let folder: URL
    public let port: Int
    private let binaries: URL
    private let asPostgresUser: Bool

    /// The newest installed server's programs: Debian keeps them in /usr/lib/postgresql/N/bin.
    public static func binaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap(Int.init).sorted().reversed()
            .map { root.appendingPathComponent("\($0)/bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
    }

    /// Starts a cluster; its superuser is `runway`, with trust authentication on loopback.
    public static func start() async throws -> PostgresCluster {
        guard let binaries = binaries() else {
            throw Unavailable(description: "PostgreSQL is not installed (Scripts/test installs Debian's postgresql package)")
        }
        let folder = URL(fileURLWithPath: "/tmp/runway-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let asPostgresUser = geteuid() == 0
        if asPostgresUser {
            try await run("/bin/chown", ["postgres:postgres", folder.path], asPostgresUser: false)
        }
        let data = folder.appendingPathComponent("data").path
        try await run(
            binaries.appendingPathComponent("initdb").path,
            ["-D", data, "-U", "runway", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"],
            asPostgresUser: asPostgresUser)
        // A port free when chosen can be taken before the server binds it (a busy suite opens
        // many connections): a start that fails is tried again on another port.
        var failure: (any Error)?
        for _ in 0..<5 {
            let cluster = PostgresCluster(folder: folder, port: try freePort(), binaries: binaries, asPostgresUser: asPostgresUser)
            do {
                try await run(
                    binaries.appendingPathComponent("pg_ctl").path,
                    [
                        "-D", data, "-l", folder.appendingPathComponent("server.log").path, "-w", "-o",
                        "-p \(cluster.port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100 "
                            + "-c shared_buffers=16MB -c dynamic_shared_memory_type=mmap", "start",
                    ], asPostgresUser: asPostgresUser)
                return cluster
            } catch {
                let log = (try? String(contentsOf: folder.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
                failure = Unavailable(description: "\(error); server log: \(log.suffix(2000))")
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw failure ?? Unavailable(description: "the server did not start")
    }

    /// A client configuration for the cluster's `postgres` database.
    public var configuration: PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: "runway", password: nil, database: "postgres", tls: .disable)
    }

    /// Stops the server at once and removes its files.
    public func stop() async {
        _ = try? await Self.run(
            binaries.appendingPathComponent("pg_ctl").path,
            ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"],
            asPostgresUser: asPostgresUser)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs the cluster for `body`, stopping it whatever happens.
    public static func with<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await start()
        return try await withCleanup({ await cluster.stop() }) { try await body(cluster) }
    }

    /// Runs `program` and waits for it with `waitpid`, its output in a file and no other
    /// descriptor of this process (``ChildProcess``: a `Process` would wait for the server that
    /// `pg_ctl start` leaves running, as it inherits the descriptor `Process` watches).
    private static func run(_ program: String, _ arguments: [String], asPostgresUser: Bool) async throws {
        let argv = asPostgresUser ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("runway-pg-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let child = ChildProcess(argv[0], Array(argv.dropFirst()), output: .file(outputPath), error: .output)
        let status: Int32 = try await offThePool {
            try child.run()
            return child.terminationReason == .exit ? child.terminationStatus : 128 + child.terminationStatus
        }
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw Unavailable(description: "\(program) \(arguments.joined(separator: " ")) failed (\(status)): \(text)")
        }
    }

    /// A loopback port nothing listens on now, below the kernel's ephemeral range (32768 and up
    /// here), so that the suite's own outgoing connections do not take it meanwhile.
    private static func freePort() throws -> Int {
        for _ in 0..<100 {
            guard let socket = try? LoopbackSocket(port: Int.random(in: 20_000..<32_000)) else { continue }
            socket.close()
            return socket.port
        }
        throw Unavailable(description: "no free loopback port between 20000 and 32000")
    }
}
