import Foundation
import HTTPTypes
import Logging
import NIOCore
import Runway
import RunwayExamples
import RunwayNIO
import RunwayDemoServer
import RunwayServer

/// The transports every HTTP-level test runs against.
public enum TransportKind: String, CaseIterable, Sendable {
    case urlSession
    case asyncHTTPClient
}

/// A running demo server, an engine over the chosen transport, and the captured log.
public struct Harness: Sendable {
    public let server: DemoServer
    public let engine: Engine
    public let log: LogCapture

    public var probe: ServerProbe { server.probe }

    public init(server: DemoServer, engine: Engine, log: LogCapture = LogCapture()) {
        self.server = server
        self.engine = engine
        self.log = log
    }

    /// Registers the plain test service (status-only convention) and the listing service.
    public func registerServices(signer: (any RequestSigner)? = nil, interceptors: [any Interceptor] = []) throws {
        var test = Service(
            id: .test, environment: .develop, baseURLs: [.develop: server.baseURL], credentials: .init(signer: signer))
        test.interceptors = interceptors
        try engine.register(test)
        try engine.register(listingService(baseURL: server.baseURL))
    }
}

/// Runs `body` against a fresh demo server and an engine over `transport`, then stops both.
@discardableResult
public func withHarness<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ transport: TransportKind = .asyncHTTPClient,
    cache: ResponseCache? = nil,
    sleep: (@Sendable (Duration) async throws -> Void)? = nil,
    network: NetworkMonitor? = nil,
    _ body: (Harness) async throws -> T
) async throws -> T {
    let server = try await DemoServer.start()
    let log = LogCapture()
    let nio: AsyncHTTPClientTransport? =
        transport == .asyncHTTPClient
        ? AsyncHTTPClientTransport() : nil
    let chosen: any Transport = nio ?? URLSessionTransport()
    let logger = Logger(label: "runway.test") { _ in log }
    let engine =
        if let sleep { Engine(transport: chosen, cache: cache, logger: logger, network: network, sleep: sleep) } else {
            Engine(transport: chosen, cache: cache, logger: logger, network: network)
        }
    let harness = Harness(server: server, engine: engine, log: log)
    try harness.registerServices()
    return try await withCleanup({
        try? await nio?.shutdown()
        await server.stop()
    }) {
        try await body(harness)
    }
}

/// Runs `body` with a fresh demo server (by default; `start` makes another) and a fresh
/// transport of `kind`, shutting both down after.
@discardableResult
public func withServer<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ kind: TransportKind = .asyncHTTPClient, connections: AsyncHTTPClientTransport.Connections = .init(),
    start: () async throws -> DemoServer = { try await DemoServer.start() },
    _ body: (any Transport, DemoServer) async throws -> T
) async throws -> T {
    let server = try await start()
    let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport(connections: connections) : nil
    let transport: any Transport = nio ?? URLSessionTransport()
    return try await withCleanup({
        try? await nio?.shutdown()
        await server.stop()
    }) {
        try await body(transport, server)
    }
}

/// Runs `body`, then `cleanup` whether `body` threw or not (async `defer`).
public func withCleanup<T>(
    isolation: isolated (any Actor)? = #isolation, _ cleanup: () async -> Void, _ body: () async throws -> T
) async throws -> T {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}

extension Harness {
    /// Queues `action` on the main actor, opens gate `key` and holds the main actor until the
    /// engine has logged that load's outcome — its last step: the answer is then on its way to
    /// the main actor, queued behind `action`.
    ///
    /// - returns: Whether the outcome was logged in time.
    @MainActor
    public func openGateHoldingMainActor(_ key: String, queuing action: @escaping @MainActor () -> Void) -> Bool {
        let answered = DispatchSemaphore(value: 0)
        let log = self.log
        Task.detached {
            _ = await log.waitForLine { $0.message.contains("/faults/gate/\(key)") }
            answered.signal()
        }
        Task { @MainActor in action() }
        probe.openGate(key)
        return answered.wait(timeout: .now() + 30) == .success
    }
}

extension ServerProbe {
    /// After a load timed out: if the server took its request, waits until the server sees the
    /// connection closed — the deadline must end the exchange on the wire, not only for the
    /// caller. A request that the deadline beat to the server (a loaded machine) has nothing
    /// to close, and waiting for it would wait forever.
    public func waitForClose(ifSeen route: String) async {
        guard count(route) > 0 else { return }
        await wait(for: .holdClosed)
    }
}
