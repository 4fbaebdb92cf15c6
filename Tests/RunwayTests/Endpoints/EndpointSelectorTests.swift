import Foundation
import Logging
import NIOSSL
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Fastest-address selection over real sockets: one host name, three loopback addresses
/// (127.0.0.1–3, all loopback on Linux) with different latencies.
@Suite("Endpoint selection", .timeLimit(.minutes(10)))
struct EndpointSelectorTests {
    static let host = "api.runway.test"

    /// Rounds only when a test calls `probe`, so that none runs behind its back.
    static var manual: EndpointSelector.Probing {
        var probing = EndpointSelector.Probing()
        probing.probesAutomatically = false
        return probing
    }

    /// A listener on `address:port` whose accept queue is full: the kernel drops new SYNs, so a
    /// connect there waits for retransmits instead of completing.
    final class FullListener: Sendable {
        let listener: Int32
        let fillers: [Int32]

        init(address: String, port: Int) throws {
            guard let (family, storage, length) = TCPConnectProbe.socketAddress(address, port: port) else {
                throw RunwayError.invalidRequest(reason: "bad address")
            }
            let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            var reuse: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            var bound = storage
            let ok = withUnsafePointer(to: &bound) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, length) == 0 }
            }
            guard ok, listen(descriptor, 0) == 0 else {
                _ = Glibc.close(descriptor)
                throw RunwayError.invalidRequest(reason: "cannot listen on \(address):\(port)")
            }
            listener = descriptor
            // Connections nobody accepts fill the queue (a backlog of 0 holds one).
            var fillers: [Int32] = []
            for _ in 0..<2 {
                let filler = socket(family, Int32(SOCK_STREAM.rawValue), 0)
                _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
                var target = storage
                _ = withUnsafePointer(to: &target) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
                }
                fillers.append(filler)
            }
            self.fillers = fillers
        }

        func close() {
            for descriptor in fillers + [listener] { _ = Glibc.close(descriptor) }
        }
    }

    static func engine(_ selector: EndpointSelector, scheme: String = "http", port: Int, transport: AsyncHTTPClientTransport)
        throws -> (Engine, LogCapture)
    {
        let log = LogCapture()
        let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in log })
        try engine.register(
            Service(
                id: .test,
                baseURLs: [.release: "\(scheme)://\(host):\(port)"],
                connection: .init(allowsInsecureHTTP: true, endpoints: selector)))
        return (engine, log)
    }

    @Test("TCP connect: the address that accepts is chosen; a full queue and a refusal are not; requests keep the host name")
    func tcpProbeChoosesTheFastest() async throws {
        let server = try await DemoServer.start(address: "127.0.0.1")
        let slow = try FullListener(address: "127.0.0.2", port: server.port)
        var probing = Self.manual
        // One attempt each, with time to spare for a loopback handshake on a loaded machine:
        // the full queue costs one timeout, and the ranking is the subject, not the deadline.
        probing.attempts = 1
        probing.timeout = .seconds(5)
        let selector = EndpointSelector(
            host: Self.host, port: server.port, candidates: ["127.0.0.2", "127.0.0.3", "127.0.0.1", "not-an-ip"],
            probing: probing)
        #expect(selector.candidates == ["127.0.0.2", "127.0.0.3", "127.0.0.1"], "names are not candidates")
        #expect(selector.address == nil, "before the first round: DNS")
        let transport = AsyncHTTPClientTransport()
        try await withCleanup({
            slow.close()
            try? await transport.shutdown()
            await server.stop()
        }) {
            let measurements = await selector.probe()
            #expect(measurements.first?.address == "127.0.0.1" && measurements.first?.time != nil)
            #expect(measurements.filter { $0.time == nil }.map(\.address).sorted() == ["127.0.0.2", "127.0.0.3"])
            #expect(selector.address == "127.0.0.1")

            let (engine, log) = try Self.engine(selector, port: server.port, transport: transport)
            let response = try await engine.perform(AdHocAPI(path: "/echo/hello"), params: [:]).get()
            #expect(response.json?["authority"]?.stringValue == "\(Self.host):\(server.port)", "Host stays the name")
            #expect(log.lines.last?.message.contains("via 127.0.0.1") == true)
            #expect(log.lines.last?.metadata["net.peer.address"] == "127.0.0.1")
        }
    }

    @Test("HTTP probes rank by answer time; a stopped address hands over to the next; none left falls back to DNS")
    func httpProbeFailoverAndFallback() async throws {
        // Each server answers when the test opens its gate, and the probes are timed on a clock
        // the test sets: the three answer times are the test's, not the scheduler's.
        // The port is taken on 127.0.0.1 first: every other test's servers and connections live
        // there, so a port found free on 127.0.0.3 may be in use on 127.0.0.1 (it was, once in
        // about 50 runs). 127.0.0.2 and .3 serve only this suite, so the port is free there.
        let far = try await DemoServer.start(address: "127.0.0.1", healthGate: "health")
        let middle = try await DemoServer.start(address: "127.0.0.2", port: far.port, healthGate: "health")
        let fast = try await DemoServer.start(address: "127.0.0.3", port: far.port, healthGate: "health")
        let clock = ManualClock()
        var probing = Self.manual
        probing.probe = .http(path: "/health")
        probing.attempts = 1
        probing.timeout = .seconds(600)
        probing.clock = clock
        let selector = EndpointSelector(
            host: Self.host, port: fast.port, candidates: ["127.0.0.1", "127.0.0.2", "127.0.0.3"], scheme: "http",
            probing: probing)
        let transport = AsyncHTTPClientTransport()
        try await withCleanup({
            try? await transport.shutdown()
            await fast.stop()
            await middle.stop()
            await far.stop()
        }) {
            let (engine, log) = try Self.engine(selector, port: fast.port, transport: transport)
            let round = Task { await selector.probe(using: transport) }
            // Three probes started (one read each); each then ends (one read) as its gate opens.
            await clock.waitForReads(3)
            for (reads, server, time) in [(4, fast, 10), (5, middle, 1_000), (6, far, 2_000)] {
                clock.set(.milliseconds(time))
                server.probe.openGate("health")
                await clock.waitForReads(reads)
            }
            let measurements = await round.value
            #expect(measurements.map(\.address) == ["127.0.0.3", "127.0.0.2", "127.0.0.1"])
            #expect(measurements.map(\.time) == [.milliseconds(10), .milliseconds(1_000), .milliseconds(2_000)])
            #expect(fast.probe.count("/health") == 1 && far.probe.count("/health") == 1)

            _ = try await engine.perform(AdHocAPI(path: "/echo/one"), params: [:]).get()
            #expect(fast.probe.count("/echo") == 1)

            // The fastest stops: its refusal marks it, and the retry goes to the next fastest.
            await fast.stop()
            let retrying = RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(10))
            _ = try await engine.perform(AdHocAPI(path: "/echo/two", retryPolicy: retrying), params: [:]).get()
            #expect(middle.probe.count("/echo") == 1)
            #expect(selector.address == "127.0.0.2")
            #expect(log.lines.last?.message.contains("via 127.0.0.2") == true)

            // All stop: with no healthy address left the request asks DNS, which has never heard of
            // the name.
            await middle.stop()
            await far.stop()
            let result = await engine.perform(AdHocAPI(path: "/echo/three", retryPolicy: retrying), params: [:])
            #expect(selector.address == nil)
            guard case .failure(.noNetwork(let reason)) = result else {
                Issue.record("expected no network, got \(result)")
                return
            }
            #expect(reason == .dnsFailure, "the last attempt went to DNS")
            #expect(log.lines.last?.metadata["net.peer.address"] == "-")
        }
    }

    /// Two HTTPS servers — `right` on 127.0.0.1, `wrong` on `wrongAddress` (on `right`'s port
    /// when that is another address, so one selector reaches both) — and a transport that trusts
    /// `authority`; all stopped afterwards.
    func withTLSServers(
        _ authority: TestCertificateAuthority, right: TLSConfiguration, wrong: TLSConfiguration,
        wrongAddress: String = "127.0.0.1", _ body: (DemoServer, DemoServer, AsyncHTTPClientTransport) async throws -> Void
    ) async throws {
        let rightServer = try await DemoServer.start(tls: right, address: "127.0.0.1")
        let wrongServer = try await DemoServer.start(
            tls: wrong, address: wrongAddress, port: wrongAddress == "127.0.0.1" ? 0 : rightServer.port)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        try await withCleanup({
            try? await transport.shutdown()
            await rightServer.stop()
            await wrongServer.stop()
        }) {
            try await body(rightServer, wrongServer, transport)
        }
    }

    @Test("HTTPS through the chosen address keeps SNI and certificate checks on the host name")
    func tlsStaysOnTheHostName() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServers(
            authority, right: try authority.serverIdentity(dnsNames: [Self.host]),
            wrong: try authority.serverIdentity(dnsNames: ["other.runway.test"])
        ) { right, wrong, transport in
            for (server, succeeds) in [(right, true), (wrong, false)] {
                let selector = EndpointSelector(
                    host: Self.host, port: server.port, candidates: ["127.0.0.1"], probing: Self.manual)
                await selector.probe()
                #expect(selector.address == "127.0.0.1")
                let (engine, _) = try Self.engine(selector, scheme: "https", port: server.port, transport: transport)
                let result = await engine.perform(AdHocAPI(path: "/echo/secure"), params: [:])
                if succeeds {
                    let host = (try? result.get())?.json?["authority"]?.stringValue
                    #expect(host == "\(Self.host):\(server.port)", "\(result)")
                } else {
                    guard case .failure(.tlsFailure) = result else {
                        Issue.record("a certificate for another name must fail with tlsFailure, got \(String(describing: result))")
                        continue
                    }
                }
            }
        }
    }

    /// What is wrong with the fastest address's server.
    enum AddressFault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Its certificate names another host.
        case certificateName
        /// Its key matches none of the service's pins.
        case pin
        var testDescription: String { rawValue }
    }

    @Test("a TLS or pin failure through the fastest address moves that load and every later one to the next, at once",
          arguments: AddressFault.allCases)
    func tlsFailureFailsOver(_ fault: AddressFault) async throws {
        let authority = try TestCertificateAuthority()
        let good = try authority.pinnedServerIdentity(dnsNames: [Self.host])
        let badIdentity = try authority.serverIdentity(dnsNames: [fault == .certificateName ? "other.runway.test" : Self.host])
        try await withTLSServers(authority, right: good.tls, wrong: badIdentity, wrongAddress: "127.0.0.2") {
            right, wrong, transport in
            let selector = EndpointSelector(
                host: Self.host, port: right.port, candidates: ["127.0.0.2", "127.0.0.1"], probing: Self.manual)
            selector.rank(["127.0.0.2", "127.0.0.1"])
            let log = LogCapture()
            let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in log })
            let pins = PublicKeyPins(
                host: Self.host, primary: good.spkiPin, backups: [PublicKeyPins.pin(ofSPKI: Array("a backup key".utf8))])
            try engine.register(
                Service(
                    id: .test,
                    baseURLs: [.release: "https://\(Self.host):\(right.port)"],
                    connection: .init(pins: fault == .pin ? [pins] : [], endpoints: selector)))
            for index in 0..<5 {
                // No retry policy: the first load moves on within its own attempt.
                _ = try await engine.perform(AdHocAPI(path: "/echo/\(index)"), params: [:]).get()
                #expect(selector.address == "127.0.0.1")
            }
            #expect(right.probe.count("/echo") == 5)
            #expect(wrong.probe.count("/echo") == 0)
            #expect(log.lines.filter { $0.message.contains("via 127.0.0.1") }.count == 5)
        }
    }

    @Test("a timeout through the fastest address marks it: the retry and every later load go to the next")
    func timeoutMarksAddress() async throws {
        // Both answer `/faults/gate/open` only once their gate is open: the slow one never opens
        // it, as a stopped process would not answer.
        let healthy = try await DemoServer.start(address: "127.0.0.1")
        let hung = try await DemoServer.start(address: "127.0.0.2", port: healthy.port)
        healthy.probe.openGate("open")
        let transport = AsyncHTTPClientTransport()
        try await withCleanup({
            try? await transport.shutdown()
            await healthy.stop()
            // Its handler still waits at the gate: let it go, so the server can stop.
            hung.probe.openGate("open")
            await hung.stop()
        }) {
            let selector = EndpointSelector(
                host: Self.host, port: healthy.port, candidates: ["127.0.0.2", "127.0.0.1"], probing: Self.manual)
            selector.rank(["127.0.0.2", "127.0.0.1"])
            let (engine, log) = try Self.engine(selector, port: healthy.port, transport: transport)
            // The deadline is the subject, so the load has one; each attempt gets it whole, and 10 s
            // is far more than a loaded machine needs for the retry's local answer.
            var api = AdHocAPI(path: "/faults/gate/open", timeout: .seconds(10))
            api.retryPolicy = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(1))
            _ = try await engine.perform(api, params: [:]).get()
            #expect(hung.probe.count("/faults/gate/open") == 1)
            #expect(healthy.probe.count("/faults/gate/open") == 1)
            #expect(selector.address == "127.0.0.1")
            for _ in 0..<4 {
                _ = try await engine.perform(AdHocAPI(path: "/faults/gate/open"), params: [:]).get()
            }
            #expect(healthy.probe.count("/faults/gate/open") == 5)
            #expect(hung.probe.count("/faults/gate/open") == 1, "never again this round")
            #expect(log.lines.filter { $0.message.contains("via 127.0.0.1") }.count == 5)
            // The next round forgives it.
            selector.rank(["127.0.0.2", "127.0.0.1"])
            #expect(selector.address == "127.0.0.2")
        }
    }

    /// A server whose `/endpoints` answers `addresses`, an engine with it as the test service,
    /// and a container in a fresh folder; all stopped and removed afterwards.
    func withServerList(
        _ addresses: [String], _ body: (DemoServer, Engine, Container) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start(endpointList: addresses)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-endpoints-\(UUID().uuidString)")
        let transport = AsyncHTTPClientTransport()
        let engine = Engine(transport: transport)
        try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
        }) {
            try await body(server, engine, Container(root: folder))
        }
    }

    @Test("a refresh stores the fetched list as blocking work, never on a thread of Swift's pool")
    func serverListStoredOffThePool() async throws {
        let server = try await DemoServer.start(endpointList: ["127.0.0.2"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-endpoints-\(UUID().uuidString)")
        let transport = AsyncHTTPClientTransport()
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
        }) {
            let log = LogCapture { BlockingWork.isCurrent }
            let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in log })
            try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
            let selector = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
            let list = try EndpointList(selector: selector, container: Container(root: folder))
            #expect(try await list.refresh(using: engine, api: AdHocAPI(path: "/endpoints")))
            let stored = try #require(log.lines.first { $0.message == "runway endpoints: the server list is stored" })
            #expect(stored.metadata["addresses"] == "1")
            #expect(stored.probed, "the list was written on a thread of Swift's pool")
        }
    }

    @Test("a stored server list older than a week is not used at launch; the next refresh fetches a new one")
    func staleServerList() async throws {
        try await withServerList(["127.0.0.2"]) { server, engine, container in
            let fetched = Date(timeIntervalSince1970: 1_800_000_000)
            let first = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
            let list = try EndpointList(selector: first, container: container, now: fetched)
            #expect(try await list.refresh(using: engine, api: AdHocAPI(path: "/endpoints"), now: fetched))

            for (age, used) in [(6 * 86_400.0, true), (8 * 86_400.0, false), (-3_600.0, false)] {
                let relaunched = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
                let stored = try EndpointList(selector: relaunched, container: container, now: fetched + age)
                #expect(relaunched.candidates == (used ? ["127.0.0.1", "127.0.0.2"] : ["127.0.0.1"]), "age \(age)")
                #expect(stored.lastFetched == (used ? fetched : nil))
            }
            let weeksLater = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
            let later = try EndpointList(selector: weeksLater, container: container, now: fetched + 30 * 86_400)
            #expect(try await later.refresh(using: engine, api: AdHocAPI(path: "/endpoints"), now: fetched + 30 * 86_400))
            #expect(weeksLater.candidates == ["127.0.0.1", "127.0.0.2"])
            #expect(server.probe.count("/endpoints") == 2)
        }
    }

    @Test("The server list: fetched at most once a day, kept in application support, used at the next launch without the network")
    func serverListDailyAndAtLaunch() async throws {
        try await withServerList(["127.0.0.2", "::1", "not-an-address", "127.0.0.3"]) { server, engine, container in
            let selector = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
            let list = try EndpointList(selector: selector, container: container)
            #expect(list.lastFetched == nil)
            let day = Date()
            #expect(try await list.refresh(using: engine, api: AdHocAPI(path: "/endpoints"), now: day))
            #expect(selector.candidates == ["127.0.0.1", "127.0.0.2", "::1", "127.0.0.3"])
            #expect(try await !list.refresh(using: engine, api: AdHocAPI(path: "/endpoints"), now: day + 3600))
            #expect(server.probe.count("/endpoints") == 1, "not again the same day")
            #expect(try await list.refresh(using: engine, api: AdHocAPI(path: "/endpoints"), now: day + 86_401))
            #expect(server.probe.count("/endpoints") == 2)

            // The next launch starts from the stored list before any network.
            let relaunched = EndpointSelector(host: Self.host, port: 443, candidates: ["127.0.0.1"], probing: Self.manual)
            let stored = try EndpointList(selector: relaunched, container: container, now: day + 86_401 + 60)
            #expect(relaunched.candidates == ["127.0.0.1", "127.0.0.2", "::1", "127.0.0.3"])
            #expect(stored.lastFetched == day + 86_401)
            let file = try container.url(for: "runway/endpoints/\(Self.host).list", in: .applicationSupport)
            #expect(container.role(containing: file) == .applicationSupport)
            #expect(try VersionedFile(url: file, format: EndpointList.format).storedVersion() == 1)
        }
    }

    @Test("a service with an endpoint selector is refused by a transport that cannot choose an address, not silently sent by DNS")
    func urlSessionRefusesSelector() async throws {
        let selector = EndpointSelector(host: "localhost", port: 9, candidates: ["127.0.0.1"])
        let transport = URLSessionTransport()
        #expect(!transport.supportsConnectAddress)
        let engine = Engine(transport: transport)
        #expect {
            try engine.register(Service(id: .test, baseURLs: [.release: "http://localhost:9"], connection: .init(endpoints: selector)))
        } throws: { error in
            guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
            return reason.contains("endpoint selector") && reason.contains("cannot connect to a chosen address")
        }
        #expect(engine.service(.test) == nil)
        #expect(selector.rounds == 0, "a refused service's selector is not started")
    }
}
