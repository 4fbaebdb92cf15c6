import Foundation
import GRDB
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The demo's order ledger keeps keys as the idempotency middleware scopes them: each client's.
@Suite("Order ledger", .timeLimit(.minutes(10)))
struct OrderLedgerTests {
    @Test("SQLite: a file of the earlier version keeps its orders, and from then on a key is each client's")
    func earlierFileMigrates() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-orders-\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        // The earlier version: unique by key alone, one order in it.
        do {
            let earlier = try SQLiteFile.open(url, schema: SQLiteOrderLedger.firstSchema)
            try await earlier.write { db in
                try db.execute(sql: "INSERT INTO demo_order (key, queue, position) VALUES ('kept', 'q', 0)")
            }
            try earlier.close()
        }
        let ledger = try SQLiteOrderLedger(url: url)
        #expect(try await ledger.orders() == [AppliedOrder(number: 1, key: "kept", queue: "q", position: 0)])
        let alice = try await ledger.apply(client: "alice", key: "order-1", queue: "q", position: 1)
        let bob = try await ledger.apply(client: "bob", key: "order-1", queue: "q", position: 1)
        let aliceAgain = try await ledger.apply(client: "alice", key: "order-1", queue: "q", position: 1)
        #expect(alice.applied && bob.applied && !aliceAgain.applied)
        #expect(alice.number == aliceAgain.number && bob.number != alice.number)
        #expect(try await ledger.orders().map(\.key) == ["kept", "order-1", "order-1"])
    }
}
