import Foundation
import HTTPTypes
@testable import Runway
@testable import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// A request already on the wire is left alone: the transport does not pull its client from
/// under it, and the engine does not send it again elsewhere as if none of it had left.
@Suite("Requests in flight", .timeLimit(.minutes(10)))
struct InFlightSafetyTests {
    @Test("Evicting an address's client lets the loads running on it finish, then shuts it down")
    func evictionWaitsForLoadsInFlight() async throws {
        let server = try await DemoServer.start(address: "127.0.0.1")
        var connections = AsyncHTTPClientTransport.Connections()
        connections.maximumAddressClients = 1
        let transport = AsyncHTTPClientTransport(connections: connections)
        try await withCleanup({
            server.probe.openGate("evicted")
            try? await transport.shutdown()
            await server.stop()
        }) {
            // Two host names on one address: two clients, and room for one.
            func request(host: String, path: String) -> TransportRequest {
                var request = TransportRequest(
                    head: HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(server.port)", path: path),
                    body: nil, timeout: .seconds(60), apiName: "Eviction")
                request.connectAddress = "127.0.0.1"
                return request
            }
            let held = Task { try await transport.send(request(host: "a.runway.test", path: "/faults/gate/evicted")) }
            await server.probe.wait(for: .gateWaiting)
            let other = try await transport.send(request(host: "b.runway.test", path: "/echo/b"))
            #expect(other.head.status == .ok)
            #expect(transport.addressClientCount == 1, "the first host's client was evicted")
            #expect(transport.retiringClientCount == 1, "…and waits for its load")
            server.probe.openGate("evicted")
            let answer = try await held.value
            #expect(answer.head.status == .ok, "the load on the evicted client finished")
            #expect(transport.retiringClientCount == 0, "the evicted client is shut down after its last load")
        }
    }

    /// The network goes and comes back while a POST waits for its answer at the chosen address:
    /// part of it may have reached the server, so it is not sent to the next address.
    /// (AsyncHTTPClient's transport: the one that connects to a chosen address.)
    @Test("A POST cut by a lost path is not sent to the next address when the path is back")
    func noFailoverAfterPathLoss() async throws {
        let first = try await DemoServer.start(address: "127.0.0.4")
        let second = try await DemoServer.start(address: "127.0.0.5", port: first.port)
        var probing = EndpointSelector.Probing()
        probing.probesAutomatically = false
        probing.attempts = 1
        probing.timeout = .seconds(30)
        let selector = EndpointSelector(
            host: EndpointSelectorTests.host, port: first.port, candidates: ["127.0.0.4", "127.0.0.5"], probing: probing)
        let transport = AsyncHTTPClientTransport()
        let monitor = NetworkMonitor(path: .wired)
        let engine = Engine(transport: transport, network: monitor)
        try await withCleanup({
            first.probe.openGate("post")
            second.probe.openGate("post")
            try? await transport.shutdown()
            await first.stop()
            await second.stop()
        }) {
            try engine.register(
                Service(
                    id: .test, baseURLs: [.release: "http://\(EndpointSelectorTests.host):\(first.port)"],
                    connection: .init(allowsInsecureHTTP: true, endpoints: selector)))
            _ = await selector.probe()
            let chosen = try #require(selector.address)
            let (there, elsewhere) = chosen == "127.0.0.4" ? (first, second) : (second, first)
            // Were it sent elsewhere, it would be answered there at once.
            elsewhere.probe.openGate("post")
            let load = Task {
                await engine.perform(AdHocAPI(path: "/faults/gate/post", method: .post), params: ["order": 1])
            }
            await there.probe.wait(for: .gateWaiting)
            monitor.update(.unreachable)
            monitor.update(.wired)
            let result = await load.value
            #expect(throws: RunwayError.noNetwork(reason: .unreachable)) { try result.get() }
            #expect(there.probe.count("POST /faults/gate/post") == 1)
            #expect(elsewhere.probe.count("POST /faults/gate/post") == 0, "never sent again to the next address")
        }
    }
}
