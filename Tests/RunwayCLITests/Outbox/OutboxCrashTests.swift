import Foundation
import Logging
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// `kill -9` against the outbox and the order server: a child process enqueues orders in two
/// queues and sends them, through a proxy that records every request and loses every fifth
/// answer after the server applied it, to `runway serve --demo` on a real PostgreSQL cluster. The
/// client is killed at random moments (mid-enqueue, mid-send, while a slow order's answer is on
/// its way); every third round the server is killed too and started again on its port. Every
/// order whose enqueue returned must be applied once, and each queue in order.
@Suite("Outbox crashes", .timeLimit(.minutes(10)))
struct OutboxCrashTests {
    /// Reads the child's lines, kills it once `killAfter` were seen
    /// (``readUntilKilled(_:_:killAfter:onLine:)``), and returns every
    /// `enqueued <queue> <position> <key>` it printed, and every `failed <key> <error>` (an item
    /// the outbox gave up: never expected here, and named when it happens).
    static func runUntilKilled(
        _ process: ChildProcess, _ reader: FileHandle, killAfter: Int
    ) async throws -> (enqueued: [(queue: String, position: Int, key: String)], failed: [String]) {
        let enqueued = TestBox<[(queue: String, position: Int, key: String)]>([])
        let failed = TestBox<[String]>([])
        try await readUntilKilled(process, reader, killAfter: killAfter) { line in
            let fields = line.split(separator: " ")
            if fields.count == 4, fields[0] == "enqueued", let position = Int(fields[2]) {
                enqueued.mutate { $0.append((String(fields[1]), position, String(fields[3]))) }
            }
            if line.hasPrefix("failed ") { failed.mutate { $0.append(String(line.dropFirst("failed ".count))) } }
            // Every line counts: a kill after "done" lines lands mid-send.
            return true
        }
        return (enqueued.value, failed.value)
    }

    static func startServer(_ url: String, port: Int) async throws -> (ChildProcess, String) {
        let (process, baseURL, _) = try await startServe(
            ["--demo", "--postgres", url, "--port", "\(port)", "--idempotency-lease", "2", "--slow-orders", "5"], niceness: 5
        ) { $0.contains("Signatures verified") }
        return (process, baseURL)
    }

    @Test("Client killed 8 times, server 3 times: every enqueued order applied once, each queue in order", arguments: ["ahc", "urlsession"])
    func killNineAppliesOnce(_ transport: String) async throws {
        try await PostgresCluster.with { cluster in
            let url = "postgres://runway@127.0.0.1:\(cluster.port)/postgres"
            let port = try LoopbackSocket.freePort()
            var (server, _) = try await Self.startServer(url, port: port)
            let proxy = try await AnswerDroppingProxy.start(to: port, dropEvery: 5)
            let device = FileManager.default.temporaryDirectory.appendingPathComponent("runway-outbox-crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: device) }
            let arguments = ["outbox", "orders", "--server", proxy.baseURL, "--container", device.path, "--transport", transport, "--timeout", "1000"]
            var enqueued: [(queue: String, position: Int, key: String)] = []
            var failed: [String] = []
            var serverKills = 0
            for round in 0..<8 {
                let (process, reader) = try startNiced(arguments + ["--count", "12", "--from", "\(round * 100)"], niceness: 5)
                let run = try await Self.runUntilKilled(process, reader, killAfter: Int.random(in: 1...24))
                enqueued += run.enqueued
                failed += run.failed
                if round % 3 == 1 {
                    // The server too, wherever it was: mid-request, mid-transaction, idle.
                    _ = kill(server.processIdentifier, SIGKILL)
                    let killed = server
                    await offThePool { killed.waitUntilExit() }
                    serverKills += 1
                    (server, _) = try await Self.startServer(url, port: port)
                }
            }
            let drained = try await runRunway(arguments + ["--count", "0"])
            await proxy.stop()
            _ = kill(server.processIdentifier, SIGTERM)
            let stopped = server
            await offThePool { stopped.waitUntilExit() }
            #expect(drained["left"] as? Int == 0)
            failed += drained["failed"] as? [String] ?? []

            let database = try await PostgresCollectorDatabase.connect(
                cluster.configuration, logger: Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() })
            let orders = try await PostgresOrderLedger.open(database).orders()
            await database.close()
            let applied = Set(orders.map(\.key))
            let printed = Set(enqueued.map(\.key))
            print(
                "outbox kill -9 (\(transport)): \(enqueued.count) enqueued and acknowledged over 8 client kills and \(serverKills) server kills; "
                    + "server applied \(orders.count) (\(applied.count) distinct keys), \(applied.subtracting(printed).count) committed but not acknowledged before a kill; "
                    + "the proxy carried \(proxy.sentKeys.count) requests and lost \(proxy.droppedKeys.count) answers")
            #expect(enqueued.count >= 8)
            // The proxy saw every applied order go by, and lost answers that were sent again.
            #expect(applied.isSubset(of: Set(proxy.sentKeys)))
            #expect(!proxy.droppedKeys.isEmpty)
            #expect(failed.isEmpty, "the outbox gave up items: \(failed)")
            // What became of each acknowledged order the server never applied.
            let fates = printed.subtracting(applied).sorted().map { key in
                "\(key): sent \(proxy.sentKeys.filter { $0 == key }.count) times, answer dropped "
                    + "\(proxy.droppedKeys.filter { $0 == key }.count) times"
            }
            #expect(printed.isSubset(of: applied), "every acknowledged order was applied; not: \(fates)")
            #expect(orders.count == applied.count, "each once")
            // At most one enqueue was in progress at each kill: committed, its line never printed.
            #expect(applied.subtracting(printed).count <= 8)
            for queue in ["q0", "q1"] {
                let positions = orders.filter { $0.queue == queue }.map(\.position)
                #expect(positions == positions.sorted() && Set(positions).count == positions.count, "\(queue) in order: \(positions)")
            }
        }
    }
}
