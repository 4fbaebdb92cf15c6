import Foundation
import RunwayTestSupport
import Testing

/// The throwaway clusters the PostgreSQL tests start: one a killed run left behind is stopped and
/// removed by the next start; one whose test process still runs is left alone.
@Suite("Throwaway PostgreSQL clusters", .timeLimit(.minutes(10)))
struct PostgresClusterTests {
    @Test("a cluster whose test process is gone is stopped and removed by the sweep; a live process's cluster stays")
    func abandonedClusterIsSwept() async throws {
        let left = try await PostgresCluster.start()
        let live = try await PostgresCluster.start()
        try await withCleanup({
            await left.stop()
            await live.stop()
        }) {
            // `left` as a killed run leaves it: its owner a process that has exited.
            let exited = Process()
            exited.executableURL = URL(fileURLWithPath: "/bin/true")
            try exited.run()
            exited.waitUntilExit()
            try Data("\(exited.processIdentifier)".utf8).write(to: left.folder.appendingPathComponent("owner"))
            let server = try #require(Self.serverPID(of: left))
            #expect(PostgresCluster.isRunning(server))

            await PostgresCluster.sweepAbandoned()
            #expect(!FileManager.default.fileExists(atPath: left.folder.path), "the abandoned cluster's folder is removed")
            #expect(!PostgresCluster.isRunning(server), "its server is stopped")
            #expect(FileManager.default.fileExists(atPath: live.folder.path), "a running process's cluster is left")
            let liveServer = try #require(Self.serverPID(of: live))
            #expect(PostgresCluster.isRunning(liveServer))
        }
    }

    /// The server's process, from the first line of its `postmaster.pid`.
    static func serverPID(of cluster: PostgresCluster) -> Int32? {
        let file = cluster.folder.appendingPathComponent("data/postmaster.pid")
        return (try? String(contentsOf: file, encoding: .utf8))?.split(separator: "\n").first.flatMap { Int32($0) }
    }
}
