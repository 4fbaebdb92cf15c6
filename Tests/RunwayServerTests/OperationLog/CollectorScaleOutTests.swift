import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore
@testable import Runway
import RunwayExamples
import RunwayNIO
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The collector's scale-out story as users deploy it: several stateless `runway serve`
/// processes, each verifying signatures, on one PostgreSQL server — events and nonces shared
/// through the database, any process free to die.
@Suite("Collector processes on one PostgreSQL", .timeLimit(.minutes(10)))
struct CollectorScaleOutTests {
    /// A `runway serve --postgres` child process, verifying with the demo key.
    struct Collector {
        let process: ChildProcess
        let baseURL: String

        static func start(_ url: String, port: Int = 0) async throws -> Collector {
            // Less than the lowest priority: the test waits on these children's work throughout.
            let (process, baseURL, _) = try await startServe(["--postgres", url, "--port", "\(port)"], niceness: 5) {
                $0.contains("Signatures verified")
            }
            return Collector(process: process, baseURL: baseURL)
        }

        func kill() {
            _ = Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// One signed batch `POST`, as bytes on the wire: the same request can be sent to any
    /// collector, again.
    struct SignedBatch {
        var head: HTTPRequest
        var body: Data

        /// `events` signed for `baseURL` (every collector here listens on 127.0.0.1, and the
        /// signature covers the authority, so it is signed for the one it goes to first).
        init(_ events: [String], for baseURL: String) throws {
            body = try Gzip.compress(CollectorTests.batch(events))
            head = HTTPRequest(
                method: .post, scheme: "http", authority: baseURL.replacingOccurrences(of: "http://", with: ""),
                path: "/oplog/batches")
            head.headerFields[.contentType] = "application/json"
            head.headerFields[.contentEncoding] = "gzip"
            try HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret).sign(
                &head, body: body, context: SigningContext(apiName: "raw", service: "oplog", attempt: 1))
        }

        /// Sends the request to `baseURL` as it was signed (the `Host` it names included).
        func send(to baseURL: String) async throws -> CollectorTests.Answer {
            var request = HTTPClientRequest(url: baseURL + "/oplog/batches")
            request.method = .POST
            for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
            if let authority = head.authority { request.headers.replaceOrAdd(name: "host", value: authority) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return CollectorTests.Answer(status: Int(response.status.code), json: try? JSON(parsing: Data(buffer: bytes)))
        }
    }

    /// A device: its own queue, signing with the demo key, uploading to one collector.
    static func device(
        _ container: Container, to baseURL: String, transport: AsyncHTTPClientTransport,
        onUpload: @escaping @Sendable (OperationLog.UploadReport) -> Void = { _ in }
    ) throws -> OperationLog {
        let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in SwiftLogNoOpLogHandler() })
        try engine.register(
            Service(
                id: "oplog",
                baseURLs: [.release: baseURL],
                credentials: .init(signer: HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret))))
        return try OperationLog(
            engine: engine, service: "oplog", container: container, policy: CollectorFixture.policy,
            onUpload: onUpload)
    }

    @Test(
        "Three collector processes on one PostgreSQL: devices upload at all three, batches replayed across them and sent to two at once, one killed with SIGKILL mid-run — every event stored once, a signed request accepted once across all three"
    )
    func threeCollectorsOneDatabase() async throws {
        try await PostgresCluster.with { cluster in
            let url = "postgres://runway@127.0.0.1:\(cluster.port)/postgres"
            var collectors: [Collector] = []
            for _ in 0..<3 { collectors.append(try await Collector.start(url)) }
            let transport = AsyncHTTPClientTransport()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-scaleout-\(UUID().uuidString)")
            let database = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            try await withCleanup({
                for collector in collectors where collector.process.isRunning { collector.kill() }
                try? await transport.shutdown()
                await database.close()
                try? FileManager.default.removeItem(at: folder)
            }) {
                let store = PostgresOperationLogStore(database: database)
                let (a, b, c) = (collectors[0].baseURL, collectors[1].baseURL, collectors[2].baseURL)
                var expected: Set<String> = []

                // One signed request, accepted by one process, is a replay at the others: the
                // nonce store is the database's, not each process's.
                let replayedID = UUID().uuidString
                let once = try SignedBatch([CollectorTests.event(id: replayedID)], for: a)
                #expect(try await once.send(to: a).status == 200)
                for other in [b, c, a] {
                    let again = try await once.send(to: other)
                    #expect(again.status == 401 && again.reason == "replayed_nonce", "\(other): \(String(describing: again.json))")
                }
                expected.insert(replayedID)

                // The same 50 events sent to two collectors at once (each request signed, as a
                // device retrying on another address would): both answer 200, each event is new
                // at exactly one of them.
                let shared = (0..<50).map { _ in UUID().uuidString }
                let toA = try SignedBatch(shared.map { CollectorTests.event(id: $0) }, for: a)
                let toB = try SignedBatch(shared.map { CollectorTests.event(id: $0) }, for: b)
                async let first = toA.send(to: a)
                async let second = toB.send(to: b)
                let (answerA, answerB) = try await (first, second)
                #expect(answerA.status == 200 && answerB.status == 200)
                #expect((answerA.json?["new"]?.intValue ?? 0) + (answerB.json?["new"]?.intValue ?? 0) == 50)
                #expect((answerA.json?["duplicates"]?.intValue ?? 0) + (answerB.json?["duplicates"]?.intValue ?? 0) == 50)
                expected.formUnion(shared)

                // Mid-run: a device at each collector, 300 events each in batches of 30, and a
                // stream of signed batches to the third, which is killed with SIGKILL once it has
                // acknowledged three of them (so most likely during a request). What it
                // acknowledged stays stored; what it did not is sent to the first, as a device
                // does when a load balancer moves it; the third device likewise.
                let acks = AsyncStream<Void>.makeStream()
                let firehose = Task { () throws -> (acknowledged: [String], unacknowledged: [String]) in
                    var acknowledged: [String] = []
                    while true {
                        let ids = (0..<30).map { _ in UUID().uuidString }
                        let batch = try SignedBatch(ids.map { CollectorTests.event(id: $0) }, for: c)
                        guard let answer = try? await batch.send(to: c), answer.status == 200 else {
                            return (acknowledged, ids)
                        }
                        acknowledged += ids
                        acks.continuation.yield()
                    }
                }
                let failedAfterKill = AsyncStream<Void>.makeStream()
                var devices: [OperationLog] = []
                for (index, baseURL) in [a, b, c].enumerated() {
                    let container = Container(root: folder.appendingPathComponent("device-\(index)"))
                    devices.append(
                        try Self.device(container, to: baseURL, transport: transport) { report in
                            if index == 2, report.failure != nil { failedAfterKill.continuation.yield() }
                        })
                }
                for device in devices[0..<2] {
                    for n in 0..<300 { expected.insert(try device.record("tap", payload: ["n": .int(n)])) }
                }
                for n in 0..<30 { expected.insert(try devices[2].record("tap", payload: ["n": .int(n)])) }
                try await devices[2].flush(within: .seconds(120))
                _ = await acks.stream.first(3)
                collectors[2].kill()
                let (acknowledged, unacknowledged) = try await firehose.value
                #expect(acknowledged.count >= 90)
                // Every acknowledged event is in the database already, with its collector dead.
                #expect(Set(acknowledged).isSubset(of: Set(try await store.allEventIDs())))
                let resent = try await SignedBatch(unacknowledged.map { CollectorTests.event(id: $0) }, for: a).send(to: a)
                #expect(resent.status == 200)
                expected.formUnion(acknowledged + unacknowledged)

                for n in 30..<300 { expected.insert(try devices[2].record("tap", payload: ["n": .int(n)])) }
                _ = await failedAfterKill.stream.first(1)
                await devices[2].close()
                let moved = try Self.device(Container(root: folder.appendingPathComponent("device-2")), to: a, transport: transport)
                for device in [devices[0], devices[1], moved] {
                    try await device.flush(within: .seconds(120))
                    let status = try await device.status()
                    #expect(status.pending == 0 && status.inFlight == 0 && status.refused == 0 && status.abandoned == 0)
                    await device.close()
                }

                // Every event is stored, none twice (the table holds exactly the ids sent).
                let stored = try await store.allEventIDs()
                #expect(stored.count == expected.count)
                #expect(Set(stored) == expected)
                #expect(expected.count == 1 + 50 + 900 + acknowledged.count + unacknowledged.count)
            }
        }
    }

    @Test(
        "A rolling restart of three collectors on one PostgreSQL under steady uploads: each drains on SIGTERM and exits 0, comes back on its port, and every event is stored once — the devices saw nothing but retries; /ready fails when the database goes, /health does not"
    )
    func rollingRestart() async throws {
        try await PostgresCluster.with { cluster in
            let url = "postgres://runway@127.0.0.1:\(cluster.port)/postgres"
            var ports: [Int] = []
            while ports.count < 3 {
                let port = try LoopbackSocket.freePort()
                if !ports.contains(port) { ports.append(port) }
            }
            var collectors: [Collector] = []
            for port in ports { collectors.append(try await Collector.start(url, port: port)) }
            let transport = AsyncHTTPClientTransport()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-rolling-\(UUID().uuidString)")
            let database = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            let running = CollectorBox(collectors)
            try await withCleanup({
                for collector in running.all where collector.process.isRunning { collector.kill() }
                try? await transport.shutdown()
                await database.close()
                try? FileManager.default.removeItem(at: folder)
            }) { () async throws in
                // A device per collector; every upload it reports, by device.
                let uploads = AsyncStream<(device: Int, report: OperationLog.UploadReport)>.makeStream()
                var devices: [OperationLog] = []
                for (index, collector) in collectors.enumerated() {
                    let container = Container(root: folder.appendingPathComponent("device-\(index)"))
                    devices.append(
                        try Self.device(container, to: collector.baseURL, transport: transport) { report in
                            uploads.continuation.yield((index, report))
                        })
                }
                let reports = NIOLockedValueBox<[(device: Int, report: OperationLog.UploadReport)]>([])
                let watcher = Task {
                    for await upload in uploads.stream { reports.withLockedValue { $0.append(upload) } }
                }
                // Steady uploads: each device records 30 events ten times a second, and its log
                // sends them in batches as it does in an app (retrying when a collector is away).
                let stop = NIOLockedValueBox(false)
                let producers = devices.map { device in
                    Task { () throws -> [String] in
                        var recorded: [String] = []
                        while !stop.withLockedValue({ $0 }) {
                            for n in 0..<30 { recorded.append(try device.record("tap", payload: ["n": .int(n)])) }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        return recorded
                    }
                }
                func acknowledged(_ device: Int) -> Int {
                    reports.withLockedValue { list in
                        list.filter { $0.device == device && $0.report.failure == nil }.reduce(0) { $0 + $1.report.eventCount }
                    }
                }
                func waitForUploads(_ device: Int, beyond count: Int) async throws {
                    while acknowledged(device) < count + 30 { try await Task.sleep(for: .milliseconds(20)) }
                }
                // Restart each collector in turn while uploads go on at all three.
                for index in 0..<3 {
                    try await waitForUploads(index, beyond: acknowledged(index))
                    let old = running.all[index]
                    #expect(kill(old.process.processIdentifier, SIGTERM) == 0)
                    await offThePool { old.process.waitUntilExit() }
                    #expect(old.process.terminationReason == .exit && old.process.terminationStatus == 0, "collector \(index) drained")
                    running.replace(index, with: try await Collector.start(url, port: ports[index]))
                    try await waitForUploads(index, beyond: acknowledged(index))
                }
                stop.withLockedValue { $0 = true }
                var expected: Set<String> = []
                var recordedCount = 0
                for producer in producers {
                    let recorded = try await producer.value
                    recordedCount += recorded.count
                    expected.formUnion(recorded)
                }
                for device in devices {
                    try await device.flush(within: .seconds(120))
                    let status = try await device.status()
                    #expect(status.pending == 0 && status.inFlight == 0 && status.refused == 0 && status.abandoned == 0)
                    await device.close()
                }
                uploads.continuation.finish()
                await watcher.value
                // What a device saw of the restarts: failed uploads it retried, nothing else.
                let failures = reports.withLockedValue { $0.filter { $0.report.failure != nil } }
                #expect(failures.allSatisfy { $0.report.backoff != nil }, "every failure was a retry")
                let stored = try await PostgresOperationLogStore(database: database).allEventIDs()
                #expect(stored.count == recordedCount)
                #expect(Set(stored) == expected)

                // What an orchestrator asks: alive, and ready while the database answers.
                func status(_ path: String) async throws -> Int {
                    let url = running.all[0].baseURL + path
                    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    return Int(response.status.code)
                }
                #expect(try await status("/ready") == 200)
                await cluster.stop()
                #expect(try await status("/ready") == 503, "the database is gone")
                #expect(try await status("/health") == 200, "the process is alive")
            }
        }
    }
}

/// The collectors of a rolling restart, as they are replaced.
final class CollectorBox: Sendable {
    private let box: NIOLockedValueBox<[CollectorScaleOutTests.Collector]>
    init(_ collectors: [CollectorScaleOutTests.Collector]) { box = NIOLockedValueBox(collectors) }
    var all: [CollectorScaleOutTests.Collector] { box.withLockedValue { $0 } }
    func replace(_ index: Int, with collector: CollectorScaleOutTests.Collector) { box.withLockedValue { $0[index] = collector } }
}
