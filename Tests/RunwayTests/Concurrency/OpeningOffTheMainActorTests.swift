import Foundation
import Logging
import RunwayStorage
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

/// The launch's disk work — the cache database, the operation log's queue, the stored server
/// list — opened from the main actor through the `open` factories runs on another thread: a
/// dispatch queue of its own (`BlockingWork`), never a thread of Swift's cooperative pool,
/// which a wait for the disk would take from every other task.
///
/// Each test opens a damaged file, so that the opening logs a line; the log capture notes
/// whether each line was logged on the main queue, the main actor's executor.
@MainActor
@Suite("Opening off the main actor", .timeLimit(.minutes(10)))
struct OpeningOffTheMainActorTests {
    let folder: URL
    var container: Container { Container(root: folder) }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-opening-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Writes 4 KB of noise where `path` of `role` is.
    func damage(_ path: String, in role: ContainerRole) throws {
        let url = try container.url(for: path, in: role)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 0xAB, count: 4096).write(to: url)
    }

    @Test("ResponseCache.open, awaited on the main actor, opens (and here makes again) the database on a queue of its own")
    func cacheOpensOffTheMainActor() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(MainQueue.isCurrent, "the test runs on the main actor, whose executor is the main queue")
        try damage("runway/http-cache.sqlite", in: .caches)
        let log = LogCapture { BlockingWork.isCurrent }
        let cache = try await ResponseCache.open(container: container, logger: Logger(label: "runway.test") { _ in log })
        let remade = try #require(log.lines.first { $0.message.contains("unreadable and is made again") })
        #expect(!remade.onMainQueue, "the database was opened on the main actor")
        #expect(remade.probed, "the database was not opened on a queue of its own")
        let disk = try #require(cache.disk)
        #expect(disk.count == 0, "a new, empty disk tier")
    }

    @Test("OperationLog.open, awaited on the main actor, opens (and here moves aside) the queue on a queue of its own")
    func operationLogOpensOffTheMainActor() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try damage("operation-log/queue.sqlite", in: .applicationSupport)
        let engine = Engine(transport: URLSessionTransport())
        try engine.register(Service(id: "oplog", baseURLs: [.release: "http://127.0.0.1:9"], connection: .init(allowsInsecureHTTP: true)))
        let log = LogCapture { BlockingWork.isCurrent }
        let operationLog = try await OperationLog.open(engine: engine, service: "oplog", container: container, logger: Logger(label: "runway.test") { _ in log })
        let damaged = try #require(log.lines.first { $0.message.contains("damaged") })
        #expect(!damaged.onMainQueue, "the queue was opened on the main actor")
        #expect(damaged.probed, "the queue was not opened on a queue of its own")
        #expect(try await operationLog.status().pending == 0)
        await operationLog.close()
    }

    @Test("EndpointList.open, awaited on the main actor, hands the stored list to the selector")
    func endpointListOpens() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let fetched = Date(timeIntervalSince1970: 1_800_000_000)
        let file = VersionedFile(
            url: try container.url(for: "runway/endpoints/api.example.com.list", in: .applicationSupport),
            format: EndpointList.format)
        try file.write(EndpointList.Stored(host: "api.example.com", addresses: ["203.0.113.9"], fetchedAt: fetched))
        var probing = EndpointSelector.Probing()
        probing.probesAutomatically = false
        let selector = EndpointSelector(host: "api.example.com", port: 443, candidates: ["203.0.113.7"], probing: probing)
        let list = try await EndpointList.open(selector: selector, container: container, now: fetched)
        #expect(selector.candidates == ["203.0.113.7", "203.0.113.9"])
        #expect(list.lastFetched == fetched)
    }
}
