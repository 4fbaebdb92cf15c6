import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayExamples
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport

/// What every chapter works with: one engine over a counted transport, the server's address,
/// a scratch storage container, and — in process — the server itself.
@MainActor
final class DemoContext {
    /// The engine of the app the demo plays: listing and demo services, a cache on disk.
    let engine: Engine
    /// Counts every request the demo's engines send.
    let wire: WireCounter
    /// The demo server's `http://host:port`.
    let baseURL: String
    /// The server in this process, or `nil` with `--server`.
    let server: DemoServer?
    /// The device's storage: the cache's disk tier, the operation-log queue, the server list.
    let container: Container
    /// The engine's response cache.
    let cache: ResponseCache
    /// Where the demo keeps what it writes; removed at the end.
    let scratch: URL
    let logger: Logger
    let metrics: DemoMetrics
    /// Every request and load of the demo's engines: `--har` and the waterfall read it.
    let recorder = LoadRecorder()

    /// The signer of every service the demo registers: the server verifies it.
    let signer = HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret)

    init(transport: any Transport, baseURL: String, server: DemoServer?, scratch: URL, logger: Logger, metrics: DemoMetrics) throws {
        self.wire = WireCounter(transport)
        self.baseURL = baseURL
        self.server = server
        self.scratch = scratch
        self.logger = logger
        self.metrics = metrics
        container = Container(root: scratch.appendingPathComponent("device", isDirectory: true))
        cache = try ResponseCache(container: container)
        engine = Engine(
            transport: wire, cache: cache, logger: logger, metrics: EngineMetrics(factory: metrics), recorder: recorder)
        try engine.register(listingService(baseURL: baseURL, signer: signer))
        try engine.register(Service(id: .demo, baseURLs: [.release: baseURL], credentials: .init(signer: signer)))
    }

    /// The server's port.
    var port: Int { URLComponents(string: baseURL)?.port ?? 80 }

    /// Another engine over the same counted transport: what a new launch, or a second part of
    /// the app, would have.
    func makeEngine(cache: ResponseCache?, network: NetworkMonitor? = nil) throws -> Engine {
        let engine = Engine(
            transport: wire, cache: cache, logger: logger, network: network, metrics: EngineMetrics(factory: metrics),
            recorder: recorder)
        try engine.register(Service(id: .demo, baseURLs: [.release: baseURL], credentials: .init(signer: signer)))
        return engine
    }
}

extension ServiceID {
    /// The demo's own service over the server's fault and echo routes.
    static let demo: ServiceID = "demo"
}

extension AdHocAPI {
    /// An API of the demo service, named for what the chapter shows; loads give up after 10 s.
    init(_ name: String, path: String) {
        self.init(service: .demo, path: path, name: name, timeout: .seconds(10))
    }
}
