import Foundation
import HTTPTypes
@testable import Runway
@testable import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// What probing may hold at most, however long the server list and however often a service is
/// registered: candidates, probes in flight, clients for chosen addresses, selectors running.
@Suite("Probing bounds", .timeLimit(.minutes(10)))
struct ProbingBoundsTests {
    @Test("A long server list is cut to maximumCandidates, the configured addresses first")
    func candidatesAreBounded() {
        let listed = (0..<200).map { "10.0.\($0 / 250).\($0 % 250)" }
        let selector = EndpointSelector(
            host: EndpointSelectorTests.host, port: 443, candidates: ["192.0.2.1"] + listed,
            probing: EndpointSelectorTests.manual)
        #expect(selector.candidates.count == 16 && selector.candidates.first == "192.0.2.1")
        selector.setCandidates(selector.configuredCandidates + listed.reversed())
        #expect(selector.candidates.count == 16)
        #expect(selector.candidates.prefix(16) == selector.configuredCandidates.prefix(16))
    }

    @Test("A round measures at most maximumConcurrentProbes candidates at once, each on one thread")
    func probesInFlightAreBounded() async throws {
        // Ten addresses whose accept queues are full: each probe waits out its timeout.
        // A port held on 127.0.0.1, where other tests' servers live; 127.0.1.x serve only this test.
        let held = try LoopbackSocket()
        let port = held.port
        let listeners = try (10..<20).map { try EndpointSelectorTests.FullListener(address: "127.0.1.\($0)", port: port) }
        defer { for listener in listeners { listener.close() } }
        var probing = EndpointSelectorTests.manual
        probing.attempts = 1
        probing.timeout = .milliseconds(200)
        probing.maximumConcurrentProbes = 3
        let selector = EndpointSelector(
            host: EndpointSelectorTests.host, port: port, candidates: (10..<20).map { "127.0.1.\($0)" },
            probing: probing)
        let measurements = await selector.probe()
        #expect(measurements.count == 10, "every candidate was measured")
        #expect(measurements.allSatisfy { $0.time == nil })
        #expect((1...3).contains(selector.peakConcurrentProbes), "\(selector.peakConcurrentProbes) at once")
    }

    @Test("Registering a service again with another selector stops the old selector's rounds")
    func replacedSelectorStops() throws {
        let engine = Engine(transport: AsyncHTTPClientTransport())
        func service(_ selector: EndpointSelector) -> Service {
            Service(id: .test, baseURLs: [.release: "https://\(EndpointSelectorTests.host)"], connection: .init(endpoints: selector))
        }
        let first = EndpointSelector(host: EndpointSelectorTests.host, port: 443, candidates: ["192.0.2.1"])
        let second = EndpointSelector(host: EndpointSelectorTests.host, port: 443, candidates: ["192.0.2.2"])
        defer {
            first.stop()
            second.stop()
        }
        try engine.register(service(first))
        #expect(first.isRunning)
        try engine.register(service(second))
        #expect(!first.isRunning && second.isRunning)
        // The same selector again keeps its rounds.
        try engine.register(service(second))
        #expect(second.isRunning)
    }

    @Test("Clients for chosen addresses are bounded; an evicted address gets a new client when used again")
    func addressClientsAreBounded() async throws {
        let server = try await DemoServer.start(address: "127.0.0.1")
        var connections = AsyncHTTPClientTransport.Connections()
        connections.maximumAddressClients = 2
        let transport = AsyncHTTPClientTransport(connections: connections)
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            func send(via address: String) async -> Int? {
                var request = TransportRequest(
                    head: HTTPRequest(
                        method: .get, scheme: "http", authority: "\(EndpointSelectorTests.host):\(server.port)",
                        path: "/echo/bounded"),
                    body: nil, timeout: .seconds(30), apiName: "Bounded")
                request.connectAddress = address
                return try? await transport.send(request).head.status.code
            }
            #expect(await send(via: "127.0.0.1") == 200)
            // Nothing listens on these: each still makes its client.
            for index in 2...6 { _ = await send(via: "127.0.2.\(index)") }
            #expect(transport.addressClientCount == 2)
            #expect(await send(via: "127.0.0.1") == 200, "the evicted address works again")
            #expect(transport.addressClientCount == 2)
        }
    }

    @Test("A burst of network changes makes one round, once the path has held still for settleTime")
    func changesAreDebounced() async throws {
        let server = try await DemoServer.start()
        let clock = ManualClock()
        var probing = EndpointSelectorTests.manual
        probing.attempts = 1
        probing.settleTime = .seconds(2)
        probing.interval = .seconds(600)
        probing.clock = clock
        let selector = EndpointSelector(
            host: EndpointSelectorTests.host, port: server.port, candidates: ["127.0.0.1"], probing: probing)
        let (changes, change) = AsyncStream<Void>.makeStream()
        try await withCleanup({
            selector.stop()
            await server.stop()
        }) {
            selector.start(changes: changes)
            await selector.waitForRound(after: 0)
            await clock.waitForSleeps(1)  // the interval
            // Five changes a second apart (a flapping link): each starts the settle time again.
            for index in 1...5 {
                change.yield()
                await clock.waitForSleeps(1 + index)
                clock.advance(by: .seconds(1))
                #expect(selector.rounds == 1, "no round while the path keeps changing (change \(index))")
            }
            // Two seconds after the last change: one round for the whole burst.
            clock.advance(by: .seconds(1))
            await selector.waitForRound(after: 1)
            await clock.waitForSleeps(7)  // the next interval: nothing else is pending
            #expect(selector.rounds == 2)
            // The interval runs on the same clock.
            clock.advance(by: .seconds(600))
            await selector.waitForRound(after: 2)
            #expect(selector.rounds == 3)
        }
    }
}
