import Foundation
import Hummingbird
import Logging
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayStorage

/// A collector (demo server + SQLite store in a temporary folder), an engine with the
/// collector's service, and a container for the client's queue.
public struct CollectorFixture: Sendable {
    public let server: DemoServer
    public let store: SQLiteOperationLogStore
    public let engine: Engine
    public let transport: AsyncHTTPClientTransport
    public let container: Container
    public let folder: URL
    public let log: LogCapture

    /// A policy that never sends a batch for its age alone and backs off briefly. An upload may
    /// take 300 s, which no busy machine reaches: these tests are not about its deadline
    /// (CONTRIBUTING), and at the default 30 s an idle CI run once saw an upload to the local
    /// collector time out.
    public static var policy: OperationLog.Policy {
        var policy = OperationLog.Policy()
        policy.timeout = .seconds(300)
        policy.maximumAge = .seconds(3600)
        policy.baseBackoff = .milliseconds(20)
        policy.maximumBackoff = .milliseconds(100)
        return policy
    }

    /// Opens the client's log on the fixture's container; its uploads arrive on the stream.
    public func openLog(
        _ policy: OperationLog.Policy = Self.policy,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> (OperationLog, AsyncStream<OperationLog.UploadReport>) {
        let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        let log = try OperationLog(
            engine: engine, service: "oplog", container: container, policy: policy,
            logger: Logger(label: "runway.oplog") { _ in self.log }, wallClock: wallClock, onUpload: { sink.yield($0) })
        return (log, reports)
    }
}

extension CollectorFixture {
    /// Queues `count` events named `tap` with a log that never sends, and closes it: what the
    /// next launch finds as a backlog.
    public func queueWithoutSending(_ count: Int, payload: (Int) -> JSON) async throws {
        var holding = Self.policy
        holding.batchSize = .max / 4
        let (log, _) = try openLog(holding)
        for index in 0..<count { try log.record("tap", payload: payload(index)) }
        _ = try await log.status()
        await log.close()
    }
}

/// Runs `body` with a fresh ``CollectorFixture``, then stops everything and removes its files.
public func withCollector<T>(
    isolation: isolated (any Actor)? = #isolation,
    signer: (any RequestSigner)? = nil, verifier: SignatureVerifier<ServerRequestContext>? = nil,
    fault: (@Sendable (Int) -> CollectorFaults.Fault?)? = nil,
    limits: OperationLogCollector.Limits = OperationLogCollector.Limits(),
    _ body: (CollectorFixture) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-oplog-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let store = try SQLiteOperationLogStore(url: folder.appendingPathComponent("collector.sqlite"))
    let server = try await DemoServer.start(
        signatureVerifier: verifier, collector: OperationLogCollector(store: store, limits: limits),
        collectorFaults: fault.map(CollectorFaults.init))
    let transport = AsyncHTTPClientTransport()
    let capture = LogCapture()
    let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in capture })
    try engine.register(Service(id: "oplog", baseURLs: [.release: server.baseURL], credentials: .init(signer: signer)))
    let fixture = CollectorFixture(
        server: server, store: store, engine: engine, transport: transport,
        container: Container(root: folder.appendingPathComponent("device")), folder: folder, log: capture)
    return try await withCleanup({
        try? await transport.shutdown()
        await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }) {
        try await body(fixture)
    }
}

extension AsyncStream {
    /// The next `count` elements.
    public func first(_ count: Int) async -> [Element] {
        var taken: [Element] = []
        for await element in self {
            taken.append(element)
            if taken.count == count { break }
        }
        return taken
    }
}
