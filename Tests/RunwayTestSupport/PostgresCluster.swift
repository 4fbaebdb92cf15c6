import Foundation
import PostgresNIO
import RunwayServer

/// A throwaway PostgreSQL cluster for one test: `initdb` into a temporary folder, `pg_ctl start`
/// on a free loopback port, `pg_ctl stop -m immediate` and the folder removed at the end.
///
/// Each cluster's folder names the test process that made it (`owner`): a run killed before its
/// clusters were stopped leaves them running, and the next start stops and removes those whose
/// process is gone (``sweepAbandoned()``).
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

    /// A certificate and key for the server, in PEM: with them the cluster speaks TLS and
    /// refuses every connection without it (`hostssl` only in `pg_hba.conf`).
    public struct ServerTLS: Sendable {
        public var certificatePEM: String
        public var privateKeyPEM: String

        public init(certificatePEM: String, privateKeyPEM: String) {
            self.certificatePEM = certificatePEM
            self.privateKeyPEM = privateKeyPEM
        }
    }

    /// Starts a cluster; its superuser is `runway`, with trust authentication on loopback —
    /// over TLS only, when `tls` is given.
    public static func start(tls: ServerTLS? = nil) async throws -> PostgresCluster {
        guard let binaries = binaries() else {
            throw Unavailable(description: "PostgreSQL is not installed (Scripts/test installs Debian's postgresql package)")
        }
        await sweepAbandoned()
        let folder = URL(fileURLWithPath: "\(folderPrefix)\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("\(getpid())".utf8).write(to: folder.appendingPathComponent(ownerFile))
        let asPostgresUser = geteuid() == 0
        if asPostgresUser {
            try await run("/bin/chown", ["postgres:postgres", folder.path], asPostgresUser: false)
        }
        let data = folder.appendingPathComponent("data").path
        try await run(
            binaries.appendingPathComponent("initdb").path,
            ["-D", data, "-U", "runway", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"],
            asPostgresUser: asPostgresUser)
        var tlsOptions = ""
        if let tls {
            let certificate = folder.appendingPathComponent("server.crt").path
            let key = folder.appendingPathComponent("server.key").path
            try tls.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
            try tls.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
            // PostgreSQL refuses a key others can read, and must own it.
            _ = chmod(key, 0o600)
            if asPostgresUser { try await run("/bin/chown", ["postgres:postgres", certificate, key], asPostgresUser: false) }
            let hba = "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n"
            let hbaPath = folder.appendingPathComponent("pg_hba.conf").path
            try hba.write(toFile: hbaPath, atomically: true, encoding: .utf8)
            if asPostgresUser { try await run("/bin/chown", ["postgres:postgres", hbaPath], asPostgresUser: false) }
            tlsOptions = " -c ssl=on -c ssl_cert_file=\(certificate) -c ssl_key_file=\(key) -c hba_file=\(hbaPath)"
        }
        // A port free when chosen can be taken before the server binds it (a busy suite opens
        // many connections): a start that fails is tried again on another port.
        var failure: (any Error)?
        for _ in 0..<5 {
            let cluster = PostgresCluster(folder: folder, port: try LoopbackSocket.freePort(), binaries: binaries, asPostgresUser: asPostgresUser)
            do {
                try await run(
                    binaries.appendingPathComponent("pg_ctl").path,
                    [
                        "-D", data, "-l", folder.appendingPathComponent("server.log").path, "-w", "-o",
                        "-p \(cluster.port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100 "
                            + "-c shared_buffers=16MB -c dynamic_shared_memory_type=mmap" + tlsOptions, "start",
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

    /// Where clusters live: `/tmp/runway-pg-` and eight characters.
    static let folderPrefix = "/tmp/runway-pg-"
    /// The file in a cluster's folder naming the process that made it.
    static let ownerFile = "owner"

    /// Stops and removes every cluster whose owning test process is gone: what a killed run left
    /// running. A cluster of a process still running (another test, another run) is left alone.
    public static func sweepAbandoned() async {
        let root = URL(fileURLWithPath: "/tmp")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for name in names where "/tmp/\(name)".hasPrefix(folderPrefix) {
            let folder = root.appendingPathComponent(name)
            guard let text = try? String(contentsOf: folder.appendingPathComponent(ownerFile), encoding: .utf8),
                let owner = Int32(text), !isRunning(owner)
            else { continue }
            await abandoned(at: folder).stop()
        }
    }

    /// Whether process `pid` exists and has not exited (signal 0 checks without sending
    /// anything; an exited process nobody has reaped yet is a zombie in `/proc`).
    public static func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return true }
        return stat[afterName.upperBound...].first != "Z"
    }

    /// A cluster found in `folder`, to be stopped (its port is not needed for that).
    static func abandoned(at folder: URL) -> PostgresCluster {
        PostgresCluster(
            folder: folder, port: 0, binaries: binaries() ?? URL(fileURLWithPath: "/usr/bin"), asPostgresUser: geteuid() == 0)
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

    /// Runs the cluster (over TLS only, when `tls` is given) for `body`, stopping it whatever happens.
    public static func with<T>(
        isolation: isolated (any Actor)? = #isolation, tls: ServerTLS? = nil, _ body: (PostgresCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await start(tls: tls)
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
}
