import Foundation
import Logging
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// Reachability: the Linux monitor against a real network namespace, and what the engine, the
/// operation log and endpoint selectors do with the path.
@Suite("Network monitor", .timeLimit(.minutes(10)))
struct NetworkMonitorTests {
    @Test("After stop, a reading the system's watcher made before it never lands over a path set by hand")
    func stopEndsSystemReadings() {
        let monitor = NetworkMonitor.system()
        monitor.systemReported(.wired)
        #expect(monitor.path == .wired, "while it follows the system, readings land")
        monitor.stop()
        monitor.update(.unreachable)
        // The watcher's thread may have read the path just before stop and report it now.
        monitor.systemReported(.wired)
        #expect(monitor.path == .unreachable)
    }

    @Test(
        "Linux: rtnetlink reports an interface coming up in a new network namespace",
        .enabled(if: IPRoute.isAvailable,
            "network namespaces need root and iproute2 (CI runs as root)"))
    func rtnetlinkSeesALinkComeUp() async throws {
        let namespace = "runway-\(UUID().uuidString.prefix(8).lowercased())"
        try await IPRoute.run(["netns", "add", namespace])
        let process = ChildProcess(
            "/usr/sbin/ip", ["netns", "exec", namespace, runwayExecutable().path, "network", "--watch", "2"], output: .pipe)
        try await withCleanup({
            if process.isRunning { process.terminate() }
            try? await IPRoute.run(["netns", "del", namespace])
        }) {
            try process.run()
            guard let output = process.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
            // Only loopback, and it is down: nothing is reachable.
            let first = try await line(of: output)
            #expect(first.contains(#""reachable":false"#), "\(first)")
            // A veth pair with an address comes up — no default route, a subnet of its own, which
            // is a way out all the same (a server on that link answers): the monitor hears it.
            try await IPRoute.run(["-n", namespace, "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
            try await IPRoute.run(["-n", namespace, "addr", "add", "10.77.0.1/24", "dev", "v0"])
            try await IPRoute.run(["-n", namespace, "link", "set", "v1", "up"])
            try await IPRoute.run(["-n", namespace, "link", "set", "v0", "up"])
            let second = try await line(of: output)
            #expect(second.contains(#""reachable":true"#), "\(second)")
            // The peer goes down, so the link loses its carrier: unreachable again.
            try await IPRoute.run(["-n", namespace, "link", "set", "v1", "down"])
            let third = try await line(of: output)
            #expect(third.contains(#""reachable":false"#), "\(third)")
        }
    }

    /// A network namespace whose veth link reaches this one (`SUBNET.2` inside, `SUBNET.1`
    /// here, with a demo server on it), with a default route through the link or none; `body`
    /// gets the namespace, this side's link name, the subnet and the server.
    static func withVethNamespace(
        defaultRoute: Bool, _ body: (_ namespace: String, _ host: String, _ subnet: String, DemoServer) async throws -> Void
    ) async throws {
        let tag = UUID().uuidString.prefix(8).lowercased()
        let namespace = "runway-\(tag)"
        let (host, inside) = ("rwh\(tag)", "rwn\(tag)")
        let subnet = try await IPRoute.freeSubnet()
        try await IPRoute.run(["netns", "add", namespace])
        var server: DemoServer?
        try await withCleanup({
            try? await IPRoute.run(["link", "del", host])
            try? await IPRoute.run(["netns", "del", namespace])
            await server?.stop()
        }) {
            try await IPRoute.run(["link", "add", host, "type", "veth", "peer", "name", inside, "netns", namespace])
            try await IPRoute.run(["addr", "add", "\(subnet).1/30", "dev", host])
            try await IPRoute.run(["link", "set", host, "up"])
            try await IPRoute.run(["-n", namespace, "addr", "add", "\(subnet).2/30", "dev", inside])
            try await IPRoute.run(["-n", namespace, "link", "set", inside, "up"])
            if defaultRoute { try await IPRoute.run(["-n", namespace, "route", "add", "default", "via", "\(subnet).1"]) }
            let started = try await DemoServer.start(address: "\(subnet).1")
            server = started
            try await body(namespace, host, subnet, started)
        }
    }

    /// Runs `runway network` in `namespace` (with `--get url` when given) and returns its lines:
    /// the path, then, for a load, `{"load":"started"}` and how it ended.
    static func runwayNetwork(in namespace: String, get url: String? = nil) async throws -> [String] {
        let load = url.map { ["--get", $0, "--timeout", "40"] } ?? []
        let arguments = ["netns", "exec", namespace, runwayExecutable().path, "network"] + load
        return try await IPRoute.output(of: "/usr/sbin/ip", arguments).split(separator: "\n").map(String.init)
    }

    @Test(
        "Linux: no default route is not offline — a server across the link answers, before and after a flap; an address no route reaches fails at once",
        .enabled(if: IPRoute.isAvailable,
            "network namespaces need root and iproute2 (CI runs as root)"))
    func noDefaultRouteIsNotOffline() async throws {
        try await Self.withVethNamespace(defaultRoute: false) { namespace, host, subnet, started in
            let direct = "http://\(subnet).1:\(started.port)/echo/direct"

            // The carrier follows the peer asynchronously: asked again until the path says so.
            func waitForPath(reachable: Bool) async throws {
                for _ in 0..<200 {
                    if try await Self.runwayNetwork(in: namespace).first?.contains(#""reachable":\#(reachable)"#) == true { return }
                }
            }
            try await waitForPath(reachable: true)
            let before = try await Self.runwayNetwork(in: namespace, get: direct)
            #expect(before.first?.contains(#""reachable":true"#) == true, "\(before)")
            #expect(before.last == #"{"outcome":"success","status":200}"#, "\(before)")

            // Nothing routes to a documentation address from here: the kernel says so at connect.
            let nowhere = try await Self.runwayNetwork(in: namespace, get: "http://203.0.113.7:9/echo/nowhere")
            #expect(nowhere.last == #"{"outcome":"noNetwork.unreachable"}"#, "\(nowhere), not the 40 s timeout")

            // The link flaps; it is a way out again as soon as its carrier is back.
            try await IPRoute.run(["link", "set", host, "down"])
            try await waitForPath(reachable: false)
            let down = try await Self.runwayNetwork(in: namespace, get: direct)
            #expect(down.last == #"{"outcome":"noNetwork.unreachable"}"#, "\(down)")
            try await IPRoute.run(["link", "set", host, "up"])
            try await waitForPath(reachable: true)
            let after = try await Self.runwayNetwork(in: namespace, get: direct)
            #expect(after.last == #"{"outcome":"success","status":200}"#, "\(after)")
            #expect(started.probe.count("/echo") == 2)
        }
    }

    @Test(
        "Linux: a load in flight ends with noNetwork(.unreachable) the moment its namespace's link loses its carrier",
        .enabled(if: IPRoute.isAvailable,
            "network namespaces need root and iproute2 (CI runs as root)"))
    func linkLossEndsTheLoadInFlight() async throws {
        // The client runs in a namespace of its own; its veth peer stays here, with the server
        // on its address. Taking the peer down takes the carrier from the client's link.
        try await Self.withVethNamespace(defaultRoute: true) { namespace, host, subnet, started in
            let client = ChildProcess(
                "/usr/sbin/ip",
                [
                    "netns", "exec", namespace, runwayExecutable().path, "network",
                    "--get", "http://\(subnet).1:\(started.port)/faults/gate/link-loss", "--timeout", "40",
                ],
                output: .pipe)
            try await withCleanup({
                started.probe.openGate("link-loss")
                if client.isRunning { client.terminate() }
            }) {
                try client.run()
                guard let output = client.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
                let path = try await line(of: output)
                #expect(path.contains(#""reachable":true"#), "\(path)")
                // The request is at the server, held at a gate: the load is in flight.
                await started.probe.wait(for: .gateWaiting)
                try await IPRoute.run(["link", "set", host, "down"])
                var outcome = try await line(of: output)
                if outcome.contains(#""load""#) { outcome = try await line(of: output) }
                #expect(outcome.contains(#""outcome":"noNetwork.unreachable""#), "\(outcome), not the 40 s timeout")
                #expect(started.probe.count("/faults/gate/link-loss") == 1)
            }
        }
    }

    @Test("The machine's own path is read (this machine has a network)")
    func systemPath() {
        let monitor = NetworkMonitor.system()
        defer { monitor.stop() }
        #expect(monitor.path.isReachable)
        #expect(!monitor.path.interfaces.isEmpty)
    }

    @Test("Unreachable: a load fails at once with noNetwork(.unreachable) and reaches no server; back online it goes")
    func unreachableFailsFast() async throws {
        let server = try await DemoServer.start()
        let transport = AsyncHTTPClientTransport()
        let monitor = NetworkMonitor(path: .unreachable)
        let engine = Engine(transport: transport, network: monitor)
        try engine.register(Service(id: .test, baseURLs: [.release: server.baseURL]))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            // A retrying API still fails at once: retries wait for a network that is not there.
            let api = AdHocAPI(path: "/echo/offline", timeout: .seconds(20), retryPolicy: .default)
            let result = await engine.perform(api, params: [:])
            #expect(throws: RunwayError.noNetwork(reason: .unreachable)) { try result.get() }
            #expect(server.probe.count("/echo") == 0)
            monitor.update(.wired)
            _ = try await engine.perform(api, params: [:]).get()
            #expect(server.probe.count("/echo") == 1)
        }
    }

    @Test("The operation log waits while offline and uploads when the path comes back")
    func operationLogWaitsForTheNetwork() async throws {
        try await withCollector { fixture in
            let monitor = NetworkMonitor(path: .unreachable)
            let engine = Engine(transport: fixture.transport, network: monitor)
            try engine.register(Service(id: "oplog", baseURLs: [.release: fixture.server.baseURL]))
            let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
            let log = try OperationLog(
                engine: engine, service: "oplog", container: fixture.container, policy: CollectorFixture.policy,
                onUpload: { sink.yield($0) })
            for _ in 0..<30 { try log.record("tap") }
            await #expect(throws: OperationLogError.uploadFailed(.noNetwork(reason: .unreachable))) { try await log.flush() }
            #expect(try await log.status().uploaded == 0)
            monitor.update(.wired)
            let upload = await reports.first(1)
            #expect(upload.map(\.eventCount) == [30] && upload.first?.failure == nil)
            await log.close()
        }
    }

    @Test("Work that can wait waits for a path that is not expensive, up to its limit")
    func deferOnExpensivePath() async throws {
        try await withCollector { fixture in
            let cellular = NetworkPath(isReachable: true, interfaces: [.cellular], isExpensive: true)
            let monitor = NetworkMonitor(path: cellular)
            let engine = Engine(transport: fixture.transport, network: monitor)
            try engine.register(Service(id: "oplog", baseURLs: [.release: fixture.server.baseURL]))
            var policy = CollectorFixture.policy
            policy.deferOnExpensivePath = .seconds(3600)
            let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
            let log = try OperationLog(
                engine: engine, service: "oplog", container: fixture.container, policy: policy,
                onUpload: { sink.yield($0) })
            for _ in 0..<30 { try log.record("tap") }
            #expect(try await log.status().uploaded == 0)
            #expect(try await fixture.store.summary().events == 0, "a full batch waits on cellular")
            monitor.update(.wired)
            #expect(await reports.first(1).map(\.eventCount) == [30])
            await log.close()

            // With a short limit, the batch goes on cellular once the limit has passed.
            monitor.update(cellular)
            policy.deferOnExpensivePath = .milliseconds(50)
            let (impatientReports, impatientSink) = AsyncStream<OperationLog.UploadReport>.makeStream()
            let impatient = try OperationLog(
                engine: engine, service: "oplog", container: fixture.container, policy: policy,
                onUpload: { impatientSink.yield($0) })
            for _ in 0..<30 { try impatient.record("tap") }
            #expect(await impatientReports.first(1).map(\.eventCount) == [30])
            #expect(monitor.path.isExpensive, "sent on the expensive path")
            await impatient.close()
        }
    }

    @Test("Endpoint selectors measure again when the network comes back")
    func selectorReprobesOnReturn() async throws {
        let server = try await DemoServer.start()
        let transport = AsyncHTTPClientTransport()
        let monitor = NetworkMonitor(path: .wired)
        let engine = Engine(transport: transport, network: monitor)
        var probing = EndpointSelector.Probing()
        probing.settleTime = .zero  // the debounce has its own test
        probing.firstRoundWait = .zero  // no request here: the first round waits for none
        let selector = EndpointSelector(
            host: "api.runway.test", port: server.port, candidates: ["127.0.0.1"], probing: probing)
        try await withCleanup({
            selector.stop()
            try? await transport.shutdown()
            await server.stop()
        }) {
            try engine.register(
                Service(id: .test, baseURLs: [.release: "http://api.runway.test:\(server.port)"], connection: .init(endpoints: selector)))
            await selector.waitForRound(after: 0)
            #expect(selector.address == "127.0.0.1")
            monitor.update(.unreachable)
            monitor.update(.wired)
            await selector.waitForRound(after: 1)
            #expect(selector.rounds >= 2)
        }
    }
}
