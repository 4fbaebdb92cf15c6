import Crypto
import Foundation
import Hummingbird
import Logging
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The collector at scale: several stateless collector servers on one real PostgreSQL server
/// (a throwaway cluster per test), each event stored once, one replay window for every verifier.
@Suite("Operation-log collector on PostgreSQL", .timeLimit(.minutes(10)))
struct PostgresCollectorTests {
    /// PostgresNIO's background lines (a lease asked for before the client runs) stay out of
    /// the test output.
    static let quiet = Logger(label: "runway.postgres") { _ in SwiftLogNoOpLogHandler() }

    static func event(_ id: String, _ name: String = "tap") -> CollectedEvent {
        CollectedEvent(id: id, name: name, timeMilliseconds: 1_700_000_000_000, payload: Data(#"{"n":1}"#.utf8))
    }

    @Test("Each event once: a batch again is all duplicates, a mixed batch stores only the new")
    func storeIsIdempotent() async throws {
        try await PostgresCluster.with { cluster in
            let database = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let store = PostgresOperationLogStore(database: database)
            #expect(try await store.store([Self.event("a"), Self.event("b"), Self.event("c")]) == StoredBatch(new: 3, duplicates: 0))
            #expect(try await store.store([Self.event("a"), Self.event("b"), Self.event("c")]) == StoredBatch(new: 0, duplicates: 3))
            #expect(try await store.store([Self.event("c"), Self.event("d", "open")]) == StoredBatch(new: 1, duplicates: 1))
            let summary = try await store.summary()
            #expect(summary.events == 4 && summary.byName.first?.name == "tap" && summary.byName.first?.count == 3)
            #expect(Set(try await store.allEventIDs()) == ["a", "b", "c", "d"])
            await database.close()
        }
    }

    @Test("Two collector servers on one database: a client's batches through either are stored once")
    func twoCollectorsShareOneDatabase() async throws {
        try await PostgresCluster.with { cluster in
            let first = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let second = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let serverA = try await DemoServer.start(collector: OperationLogCollector(store: PostgresOperationLogStore(database: first)))
            let serverB = try await DemoServer.start(collector: OperationLogCollector(store: PostgresOperationLogStore(database: second)))
            let transport = AsyncHTTPClientTransport()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-pg-client-\(UUID().uuidString)")
            try await withCleanup({
                try? await transport.shutdown()
                await serverA.stop()
                await serverB.stop()
                await first.close()
                await second.close()
                try? FileManager.default.removeItem(at: folder)
            }) {
                let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in SwiftLogNoOpLogHandler() })
                try engine.register(Service(id: "oplog", baseURLs: [.release: serverA.baseURL]))
                let log = try OperationLog(engine: engine, service: "oplog", container: Container(root: folder))
                var recorded: Set<String> = []
                for index in 0..<95 { recorded.insert(try log.record("tap", payload: ["n": .int(index)])) }
                try await log.flush()
                // The same events through the other collector: nothing new.
                let batch = try await PostgresOperationLogStore(database: second).store(
                    recorded.map { Self.event($0) })
                #expect(batch == StoredBatch(new: 0, duplicates: 95))
                try engine.register(Service(id: "oplog", baseURLs: [.release: serverB.baseURL]))
                for index in 0..<5 { recorded.insert(try log.record("tap", payload: ["n": .int(95 + index)])) }
                try await log.flush()
                await log.close()
                let ids = try await PostgresOperationLogStore(database: first).allEventIDs()
                #expect(ids.count == 100 && Set(ids) == recorded)
            }
        }
    }

    @Test("One replay window for every verifier: a nonce accepted by one process is refused by another")
    func nonceStoreIsShared() async throws {
        try await PostgresCluster.with { cluster in
            let first = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let second = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let storeA = PostgresNonceStore(database: first)
            let storeB = PostgresNonceStore(database: second)
            let now = Date()
            #expect(try await storeA.record("n-1", expiry: now + 300, now: now) == .fresh)
            #expect(try await storeB.record("n-1", expiry: now + 300, now: now) == .replayed)
            // After its window the nonce may be used again.
            #expect(try await storeB.record("n-1", expiry: now + 900, now: now + 301) == .fresh)

            // Twenty racing claims of one nonce over both connections: exactly one wins.
            let outcomes = await withTaskGroup(of: NonceRecording?.self) { group in
                for index in 0..<20 {
                    let store = index.isMultiple(of: 2) ? storeA : storeB
                    group.addTask { try? await store.record("n-race", expiry: now + 300, now: now) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .fresh }.count == 1)
            #expect(outcomes.filter { $0 == .replayed }.count == 19)

            // Through HTTP: a signed request accepted once is refused when sent again.
            let secret = SymmetricKey(size: .bits256)
            let verifier = SignatureVerifier<ServerRequestContext>(keys: ["oplog": [secret]], nonces: storeB)
            let store = PostgresOperationLogStore(database: second)
            let server = try await DemoServer.start(signatureVerifier: verifier, collector: OperationLogCollector(store: store))
            try await withCleanup({
                await server.stop()
                await first.close()
                await second.close()
            }) {
                let body = try Gzip.compress(CollectorTests.batch([CollectorTests.event()]))
                let fields = try CollectorTests.signatureFields(for: body, to: server, secret: secret)
                let accepted = try await CollectorTests.post(body, to: server, headers: fields)
                #expect(accepted.status == 200, "\(String(describing: accepted.json))")
                let replayed = try await CollectorTests.post(body, to: server, headers: fields)
                #expect(replayed.status == 401 && replayed.reason == "replayed_nonce")
            }
        }
    }

    @Test("The shared nonce store is bounded: at capacity it is full until the earliest nonce expires, and expired rows are deleted")
    func nonceStoreIsBounded() async throws {
        try await PostgresCluster.with { cluster in
            let database = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let other = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            try await withCleanup({
                await database.close()
                await other.close()
            }) {
                let store = PostgresNonceStore(database: database, capacity: 3, sweepEvery: 1)
                let now = Date(timeIntervalSince1970: 1_800_000_000)
                for (index, nonce) in ["a", "b", "c"].enumerated() {
                    #expect(try await store.record(nonce, expiry: now + Double(100 + index), now: now) == .fresh)
                }
                #expect(try await store.record("d", expiry: now + 300, now: now) == .full(roomAt: now + 100))
                #expect(try await store.record("a", expiry: now + 300, now: now + 50) == .replayed, "a replay is still a replay")
                // When "a" expires there is room again, and its row is gone.
                #expect(try await store.record("d", expiry: now + 400, now: now + 100) == .fresh)
                let rows = try await other.client.query("SELECT count(*)::BIGINT FROM signature_nonce", logger: Self.quiet)
                var count: Int64 = -1
                for try await (value) in rows.decode(Int64.self) { count = value }
                #expect(count == 3, "b, c and d; a was deleted")
            }
        }
    }

    @Test("A value PostgreSQL refuses is the store's refusal, not an outage: the rest is stored, the one named, the device's queue moves on")
    func storeRefusalIsPerEvent() async throws {
        try await PostgresCluster.with { cluster in
            let database = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: Self.quiet)
            let store = PostgresOperationLogStore(database: database)
            // jsonb cannot hold U+0000 (SQLSTATE 22P05): refused, nothing of the batch stored.
            let nul = CollectedEvent(id: "nul", name: "tap", timeMilliseconds: 1, payload: Data(#"{"a":"\u0000"}"#.utf8))
            await #expect(throws: OperationLogStoreError.self) { try await store.store([Self.event("x"), nul]) }
            #expect(try await store.allEventIDs().isEmpty)
            // A rule of this deployment the collector's checks do not know: a real constraint.
            try await database.client.query(
                "ALTER TABLE collected_event ADD CONSTRAINT no_poison CHECK (name <> 'poison')", logger: Self.quiet)

            let server = try await DemoServer.start(collector: OperationLogCollector(store: store))
            let transport = AsyncHTTPClientTransport()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-pg-poison-\(UUID().uuidString)")
            try await withCleanup({
                try? await transport.shutdown()
                await server.stop()
                await database.close()
                try? FileManager.default.removeItem(at: folder)
            }) {
                let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in SwiftLogNoOpLogHandler() })
                try engine.register(Service(id: "oplog", baseURLs: [.release: server.baseURL]))
                let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
                var policy = CollectorFixture.policy
                policy.batchSize = 30
                let log = try OperationLog(
                    engine: engine, service: "oplog", container: Container(root: folder), policy: policy,
                    onUpload: { sink.yield($0) })
                var ordinary: Set<String> = []
                for index in 0..<100 {
                    if index == 10 { try log.record("poison") }
                    ordinary.insert(try log.record("tap", payload: ["n": .int(index)]))
                }
                try await log.flush(within: .seconds(60))
                let status = try await log.status()
                await log.close()
                sink.finish()
                #expect(status.refused == 1 && status.uploaded == 100 && status.pending == 0 && status.inFlight == 0)
                #expect(Set(try await store.allEventIDs()) == ordinary)
                // No upload was answered as if trying again could help.
                let failures = await reports.reduce(into: [RunwayError]()) { if let failure = $1.failure { $0.append(failure) } }
                #expect(failures.isEmpty, "\(failures)")
            }
        }
    }
}
