import Foundation
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// Idempotency keys and the demo's orders in a real PostgreSQL cluster, shared by two
/// connections as two server processes would share them.
@Suite("Idempotency keys on PostgreSQL", .timeLimit(.minutes(10)))
struct PostgresIdempotencyTests {
    @Test("PostgreSQL keeps the store's contract; a claim taken by one process is running at another")
    func contract() async throws {
        try await PostgresCluster.with { cluster in
            let first = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            let second = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            try await withCleanup({ () async in
                await first.close()
                await second.close()
            }) {
                try await IdempotencyStoreContract.check(PostgresIdempotencyStore(database: first))
                let a = PostgresIdempotencyStore(database: first)
                let b = PostgresIdempotencyStore(database: second)
                #expect(try await a.claim("shared", fingerprint: "f", now: 1_000, leaseUntil: 2_000) == .claimed)
                #expect(try await b.claim("shared", fingerprint: "f", now: 1_001, leaseUntil: 2_001) == .running)
                // Two processes racing for one free key: exactly one runs it.
                let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
                    for index in 0..<20 {
                        let store = index.isMultiple(of: 2) ? a : b
                        group.addTask { try await store.claim("race", fingerprint: "f", now: 5_000, leaseUntil: 6_000) }
                    }
                    return try await group.reduce(into: [IdempotencyClaim]()) { $0.append($1) }
                }
                #expect(claims.filter { $0 == .claimed }.count == 1)
                #expect(claims.filter { $0 == .running }.count == 19)
                // The ledger keeps one order per client and key, whichever process applies it;
                // another client's same key is another order.
                let ledgerA = try await PostgresOrderLedger.open(first)
                let ledgerB = try await PostgresOrderLedger.open(second)
                let applied = try await ledgerA.apply(client: "alice", key: "o-1", queue: "q", position: 1)
                let again = try await ledgerB.apply(client: "alice", key: "o-1", queue: "q", position: 1)
                #expect(applied.applied && !again.applied && applied.number == again.number)
                let theirs = try await ledgerB.apply(client: "bob", key: "o-1", queue: "q", position: 1)
                #expect(theirs.applied && theirs.number != applied.number)
                #expect(try await ledgerB.orders().map(\.key) == ["o-1", "o-1"])
            }
        }
    }
}
