import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
@testable import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// What bounds a collector's work: batches worked on at once are capped (beyond it, 503 `busy`
/// with `Retry-After`), and `/oplog/stats` answers a page of names, never the whole grouping.
@Suite("Collector capacity", .timeLimit(.minutes(10)))
struct CollectorCapacityTests {
    /// A SQLite store whose inserts wait at a gate the test opens: a batch held in the middle of
    /// its work for as long as the test likes.
    final class GatedStore: OperationLogStore {
        let base: SQLiteOperationLogStore
        private let waiting = NIOLockedValueBox<[CheckedContinuation<Void, Never>]>([])
        private let arrivals: AsyncStream<Void>.Continuation
        let arrived: AsyncStream<Void>

        init(base: SQLiteOperationLogStore) {
            self.base = base
            (arrived, arrivals) = AsyncStream<Void>.makeStream()
        }

        func store(_ events: [CollectedEvent]) async throws -> StoredBatch {
            await withCheckedContinuation { continuation in
                waiting.withLockedValue { $0.append(continuation) }
                arrivals.yield()
            }
            return try await base.store(events)
        }

        func open() {
            for continuation in waiting.withLockedValue({ list in defer { list = [] }; return list }) { continuation.resume() }
        }

        func summary(limit: Int, offset: Int) async throws -> CollectorSummary { try await base.summary(limit: limit, offset: offset) }
        func checkReachable() async throws { try await base.checkReachable() }
        func allEventIDs() async throws -> [String] { try await base.allEventIDs() }
        func clockOffsets() async throws -> [String: Int64?] { try await base.clockOffsets() }
    }

    static func withStore<T>(_ body: (SQLiteOperationLogStore) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-capacity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(try SQLiteOperationLogStore(url: folder.appendingPathComponent("collector.sqlite")))
    }

    @Test("At the cap a batch is answered 503 busy with Retry-After and stored nothing; when a slot frees, the next is taken")
    func capRefusesBeyondIt() async throws {
        try await Self.withStore { sqlite in
            let store = GatedStore(base: sqlite)
            var limits = OperationLogCollector.Limits()
            limits.maximumConcurrentBatches = 2
            let server = try await DemoServer.start(collector: OperationLogCollector(store: store, limits: limits))
            try await withCleanup({
                store.open()
                await server.stop()
            }) {
                let batch = { try Gzip.compress(CollectorTests.batch([CollectorTests.event()])) }
                let first = try batch(), second = try batch()
                async let answerA = CollectorTests.post(first, to: server)
                async let answerB = CollectorTests.post(second, to: server)
                // Both are in their insert, holding both slots.
                var arrivals = store.arrived.makeAsyncIterator()
                _ = await arrivals.next()
                _ = await arrivals.next()
                let refused = try await CollectorTests.post(try batch(), to: server)
                #expect(refused.status == 503)
                #expect(refused.reason == "busy")
                #expect(refused.json?["limit"]?.intValue == 2)
                let retryAfter = try #require(refused.retryAfter.flatMap { Int($0) })
                #expect((1...60).contains(retryAfter))
                store.open()
                #expect(try await answerA.status == 200)
                #expect(try await answerB.status == 200)
                async let third = CollectorTests.post(try batch(), to: server)
                _ = await arrivals.next()
                store.open()
                #expect(try await third.status == 200)
                #expect(try await sqlite.summary().events == 3, "the refused batch stored nothing")
            }
        }
    }

    @Test("/oplog/stats answers a page of names by count, at most the page limit, with the offset of the next")
    func statsArePaged() async throws {
        try await Self.withStore { store in
            var limits = OperationLogCollector.Limits()
            limits.maximumStatsPage = 3
            // Names n0…n6, n0 the most frequent.
            var events: [CollectedEvent] = []
            for name in 0..<7 {
                for _ in 0...(7 - name) {
                    events.append(CollectedEvent(id: UUID().uuidString, name: "n\(name)", timeMilliseconds: 1, payload: Data("{}".utf8)))
                }
            }
            _ = try await store.store(events)
            let server = try await DemoServer.start(collector: OperationLogCollector(store: store, limits: limits))
            try await withCleanup({ await server.stop() }) {
                func page(_ query: String) async throws -> JSON? {
                    try await ServeClient.getJSON(server.baseURL + "/oplog/stats" + query)
                }
                let first = try await page("")
                #expect(first?["events"]?.intValue == events.count)
                #expect(first?["byName"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["n0", "n1", "n2"])
                #expect(first?["next"]?.intValue == 3)
                let asked = try await page("?limit=1000&offset=3")
                #expect(asked?["byName"]?.arrayValue?.count == 3, "the limit is capped at the page limit")
                let last = try await page("?offset=6")
                #expect(last?["byName"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["n6"])
                #expect(last?["next"] == .null)
                let far = try await page("?offset=\(Int.max)&limit=-5")
                #expect(far?["byName"]?.arrayValue?.isEmpty == true && far?["events"]?.intValue == events.count)
            }
        }
    }
}

/// GETs whose answer is JSON.
enum ServeClient {
    static func getJSON(_ url: String) async throws -> JSON? {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return try? JSON(parsing: Data(buffer: bytes))
    }
}
