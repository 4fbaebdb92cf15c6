import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayNIO
import RunwayStorage

extension ServiceID {
    static let benchCollector: ServiceID = "bench-collector"
}

/// One launch in a process of its own, as an app launches: open Runway (engine, services, the
/// disk cache, the operation log, the endpoint list, the network monitor) and load once from
/// the main actor. Prints `launched <µs to the first delivered load> <µs of the launch code on
/// the main actor> <main thread CPU µs> <peak resident KB>` and exits.
///
/// The benchmark runner owns the process's `main` (an `async` one, on the main actor), so the
/// launch runs as the body of the only benchmark such a process registers, and the main actor
/// is free while the body awaits it.
enum LaunchChild {
    /// Set in the child's environment: `<way> <container folder> <server base URL>`.
    static let variable = "RUNWAY_BENCHMARK_LAUNCH"

    /// How the child opens Runway.
    enum Way: String {
        /// No Runway: a raw AsyncHTTPClient load, the floor.
        case raw
        /// Everything made on the main actor with the initialisers, as the quickstart reads.
        case onMainActor
        /// Everything but the first load made off the main actor (the cache with its disk tier
        /// opening in the background, the transport, the engine and its services; the operation
        /// log and the endpoint list opened once the first load has ended): the main actor only
        /// makes the manager and loads.
        case offMainActor
    }

    struct LaunchError: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the launch `specification` names, prints what it measured and exits.
    static func run(_ specification: String) async -> Never {
        let parts = specification.split(separator: " ").map(String.init)
        do {
            guard parts.count == 3, let way = Way(rawValue: parts[0]) else {
                throw LaunchError(description: "bad launch specification \(specification)")
            }
            let measured = try await measure(way, folder: URL(fileURLWithPath: parts[1]), baseURL: parts[2])
            print(
                "launched \(measured.total.microseconds) \(measured.onMain.microseconds) \(measured.mainThreadCPU / 1_000) \(ProcessMemory.peakResidentKB())")
            exit(0)
        } catch {
            print("failed \(error)")
            exit(1)
        }
    }

    /// The launch timed from its first line to the first delivered load, with the main
    /// thread's CPU time over the same stretch.
    @MainActor
    static func measure(_ way: Way, folder: URL, baseURL: String) async throws -> (
        total: Duration, onMain: Duration, mainThreadCPU: Int64
    ) {
        let start = ContinuousClock.now
        let mainCPUStart = threadCPU()
        let launched = try await launch(way, folder: folder, baseURL: baseURL)
        return (launched.delivered - start, launched.onMain, launched.mainThreadCPU - mainCPUStart)
    }

    /// The launch: how long its code held the main actor (the waits for work done elsewhere left
    /// out), when the first load was delivered, and the main thread's CPU time then. What a
    /// launch does after (the operation log and the endpoint list finishing their opening, the
    /// raw client's shutdown) is not counted.
    @MainActor
    static func launch(_ way: Way, folder: URL, baseURL: String) async throws -> (
        onMain: Duration, delivered: ContinuousClock.Instant, mainThreadCPU: Int64
    ) {
        let clock = ContinuousClock()
        var onMain = Duration.zero
        var mark = clock.now
        let app = try LaunchSetting(folder: folder, baseURL: baseURL)
        switch way {
        case .raw:
            // Configured as Runway's transport configures its own client (its tracer off among them).
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.clientConfiguration(.init()))
            onMain += clock.now - mark
            try await SecureClients.raw(client, url: app.listingsURL)
            let delivered = (clock.now, threadCPU())
            try await client.shutdown()
            return (onMain, delivered.0, delivered.1)
        case .onMainActor:
            // As the quickstart reads: every part made where the app's launch code runs, the
            // cache with its disk tier opening in the background (`openingInBackground:`).
            let cache = ResponseCache(openingInBackground: app.container, logger: app.logger)
            let engine = Engine(transport: AsyncHTTPClientTransport(), cache: cache, logger: app.logger, network: .system())
            try engine.register(app.listings)
            try engine.register(app.collector)
            let list = try EndpointList(selector: app.selector, container: app.container)
            let log = try OperationLog(engine: engine, service: .benchCollector, container: app.container, logger: app.logger)
            let manager = APIManager(ListingsAPI(cachePolicy: .memoryAndDisk()), engine: engine)
            onMain += clock.now - mark
            let response = try await manager.load()
            mark = clock.now
            guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
            onMain += clock.now - mark
            let delivered = (clock.now, threadCPU())
            withExtendedLifetime((log, list)) {}
            await cache.waitForDiskWork()  // not counted: for the warm launches
            return (onMain, delivered.0, delivered.1)
        case .offMainActor:
            onMain += clock.now - mark
            let opened = try await app.openOffMainActor()
            mark = clock.now
            let manager = APIManager(ListingsAPI(cachePolicy: .memoryAndDisk()), engine: opened.engine)
            onMain += clock.now - mark
            let response = try await manager.load()
            mark = clock.now
            guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
            onMain += clock.now - mark
            let delivered = (clock.now, threadCPU())
            // Opened once the first load ended; a launch holds them for the life of the app. The
            // first load's answer reaches the disk before the process ends, for the warm launches.
            _ = try await opened.rest.value
            await opened.cache.waitForDiskWork()
            return (onMain, delivered.0, delivered.1)
        }
    }

    /// The calling thread's CPU time, in nanoseconds.
    static func threadCPU() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// What the launching app configures: its container, its two services (the listings, with an
/// endpoint selector, and the operation log's collector) and its log level.
struct LaunchSetting: Sendable {
    let container: Container
    let logger: Logger
    let selector: EndpointSelector
    let listings: Service
    let collector: Service
    /// The listings' URL as the app's service names it (by host name, as the raw client loads it).
    let listingsURL: String

    init(folder: URL, baseURL: String) throws {
        guard let port = URL(string: baseURL)?.port else {
            throw LaunchChild.LaunchError(description: "no port in \(baseURL)")
        }
        container = Container(root: folder)
        var logger = Logger(label: "runway")
        logger.logLevel = .notice
        self.logger = logger
        selector = EndpointSelector(host: "localhost", port: port, candidates: ["127.0.0.1"], scheme: "http")
        listings = Service(id: .bench, baseURLs: [.release: "http://localhost:\(port)"], connection: .init(endpoints: selector))
        collector = Service(id: .benchCollector, baseURLs: [.release: baseURL])
        listingsURL = "http://localhost:\(port)/listings"
    }

    /// Everything but the first load, off the main actor: the cache made with its disk tier
    /// opening in the background, the transport (AsyncHTTPClient's event loops) and the network
    /// monitor made; the engine made and its services registered; the operation log and the
    /// endpoint list left to open, at utility priority, once the first load has ended
    /// (``Engine/waitForFirstLoad(timeout:)``).
    @concurrent
    func openOffMainActor() async throws -> (
        engine: Engine, cache: ResponseCache, rest: Task<(OperationLog, EndpointList), any Error>
    ) {
        let cache = ResponseCache(openingInBackground: container, logger: logger)
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport, cache: cache, logger: logger, network: .system())
        try engine.register(listings)
        try engine.register(collector)
        // Not needed for the first screen: opened once the first load has ended, at utility
        // priority, so that the CPU the openings need (SQLite making two schemas at a cold
        // launch) goes to the first load first.
        let rest = Task(priority: .utility) { [self] in
            await engine.waitForFirstLoad()
            async let list = EndpointList.open(selector: selector, container: container)
            let log = try await OperationLog.open(engine: engine, service: .benchCollector, container: container, logger: logger)
            return (log, try await list)
        }
        return (engine, cache, rest)
    }
}
