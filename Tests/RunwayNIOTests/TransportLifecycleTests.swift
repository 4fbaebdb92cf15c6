import AsyncHTTPClient
import Dispatch
import Foundation
import HTTPTypes
import Runway
@testable import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// How an app holds an AsyncHTTPClient transport: over its own client, shut down or released.
@Suite("AsyncHTTPClient transport lifecycle", .timeLimit(.minutes(10)))
struct TransportLifecycleTests {
    func request(_ server: DemoServer, _ path: String) -> TransportRequest {
        TransportRequest(
            head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path),
            body: nil, timeout: .seconds(300), apiName: "Lifecycle")
    }

    @Test("over the app's own HTTPClient: it sends, and the transport's shutdown leaves the app's client running")
    func overAppClient() async throws {
        let server = try await DemoServer.start()
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        try await withCleanup({
            try? await client.shutdown()
            await server.stop()
        }) {
            let transport = AsyncHTTPClientTransport(client: client)
            #expect(try await transport.send(request(server, "/echo/shared")).head.status == .ok)
            try await transport.shutdown()
            let after = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/echo/still"), timeout: .seconds(300))
            #expect(after.status.code == 200, "the app's client is the app's to shut down")
        }
    }

    @Test("an app client that follows redirects by itself is refused, not silently trusted")
    func appClientFollowingRedirects() async throws {
        try await withServerAndClient { server, client in
            let transport = AsyncHTTPClientTransport(client: client)
            await #expect {
                try await transport.send(request(server, "/faults/redirect?to=%2Fecho%2Fhop"))
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                return reason.contains("redirect")
            }
        }
    }

    @Test("through an engine, where the answer streams into memory on the event loop, a client that follows redirects is refused too")
    func appClientFollowingRedirectsThroughTheEngine() async throws {
        try await withServerAndClient { server, client in
            let engine = Engine(transport: AsyncHTTPClientTransport(client: client), metrics: nil)
            try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
            let result = await engine.perform(AdHocAPI(path: "/faults/redirect"), params: ["to": "/echo/hop"])
            guard case .failure(.invalidRequest(let reason)) = result else {
                Issue.record("expected the followed redirect refused, got \(result)")
                return
            }
            #expect(reason.contains("redirect"))
            let plain = await engine.perform(AdHocAPI(path: "/echo/plain"))
            #expect((try? plain.get())?.status == .ok, "the in-memory path sends an ordinary load as usual")
        }
    }

    @Test("shutdown closes every client the transport made, the pinned hosts' too")
    func shutdownClosesAll() async throws {
        let server = try await DemoServer.start()
        let pins = PublicKeyPins(host: "localhost", primary: PublicKeyPins.pin(ofSPKI: [1, 2, 3]), backups: [])
        let transport = AsyncHTTPClientTransport()
        func request(_ authority: String, pinned: Bool) -> TransportRequest {
            var request = TransportRequest(
                head: HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/echo/x"),
                body: nil, timeout: .seconds(300), apiName: "Lifecycle")
            if pinned { request.pins = pins }
            return request
        }
        try await withCleanup({ await server.stop() }) {
            // A pinned request makes the transport a client of its own; shutdown must close that
            // one too. (Port 1 refuses the connection: a connection the demo server accepted only
            // as it stopped would meet a trap in the server's NIO channel handler.)
            await #expect(throws: RunwayError.self) {
                try await transport.send(request("localhost:1", pinned: true))
            }
            try await transport.shutdown()
            for (authority, pinned) in [("127.0.0.1:\(server.port)", false), ("localhost:1", true)] {
                await #expect(throws: RunwayError.invalidRequest(reason: "the transport was shut down"), "\(authority) must be closed") {
                    try await transport.send(request(authority, pinned: pinned))
                }
            }
        }
    }

    /// Clients made on another thread once the test opens `gate`, as a transport makes its own.
    static func heldClient(until gate: DispatchSemaphore) -> SharedClient {
        SharedClient {
            gate.wait()
            return SharedClient.Made(perLoop: AsyncHTTPClientTransport.clientConfiguration(.init()), connections: 8)
        }
    }

    @Test("a request sent while the transport's client is still being made waits for it, and goes out once it is made")
    func firstSendWaitsForTheClient() async throws {
        let server = try await DemoServer.start()
        let gate = DispatchSemaphore(value: 0)
        let shared = Self.heldClient(until: gate)
        let transport = AsyncHTTPClientTransport(shared: shared, owned: true, connections: .init())
        try await withCleanup({
            gate.signal()  // a failed expectation must not leave the maker waiting
            try? await transport.shutdown()
            await server.stop()
        }) {
            let sent = Task { try await transport.send(request(server, "/echo/early")) }
            while shared.waiting == 0 { await Task.yield() }
            #expect(server.probe.count("/echo") == 0, "nothing sent before the client was made")
            gate.signal()
            let answer = try await sent.value
            #expect(answer.head.status == .ok)
            #expect(server.probe.count("/echo") == 1)
        }
    }

    @Test("a transport released while its clients are still being made shuts them down once they are made")
    func releasedWhileMaking() async throws {
        let gate = DispatchSemaphore(value: 0)
        let shared = Self.heldClient(until: gate)
        do {
            // Released at the end of this scope, without a shutdown, before its client exists.
            let transport = AsyncHTTPClientTransport(shared: shared, owned: true, connections: .init())
            withExtendedLifetime(transport) {}
        }
        gate.signal()
        let clients = await shared.made().clients
        #expect(!clients.isEmpty)
        // Shut down by their maker: AsyncHTTPClient refuses a second shutdown. (Left running, a
        // client would trap when released in a debug build.)
        for client in clients {
            await #expect(throws: HTTPClientError.alreadyShutdown) { try await client.shutdown() }
        }
    }

    /// Sends once through a transport that goes out of scope without being shut down.
    func sendWithUnreleasedTransport(_ server: DemoServer) async throws {
        let transport = AsyncHTTPClientTransport()
        let response = try await transport.send(request(server, "/echo/released"))
        #expect(response.head.status == .ok)
    }

    @Test("a transport released without shutdown closes its clients itself and does not trap")
    func releasedWithoutShutdown() async throws {
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            try await sendWithUnreleasedTransport(server)
            // AsyncHTTPClient traps (in debug builds) when a client is released while running;
            // reaching this line in a debug test build is the assertion.
            #expect(server.probe.count("/echo") == 1)
        }
    }
}
