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
@Suite("Network monitor", .timeLimit(.minutes(1)))
struct NetworkMonitorTests {
    /// Runs `ip` with `arguments` and waits for it.
    static func ip(_ arguments: [String]) async throws {
        let process = ChildProcess("/usr/sbin/ip", arguments)
        try process.run()
        await offThePool { process.waitUntilExit() }
        guard process.terminationStatus == 0 else {
            throw RunwayError.invalidRequest(reason: "ip \(arguments.joined(separator: " ")) failed")
        }
    }

    /// A `10.213.x` prefix no interface here holds: a run that was killed before its clean-up
    /// leaves its veth behind, and a second link on the same subnet would take this one's
    /// packets.
    static func freeSubnet() async throws -> String {
        let process = ChildProcess("/usr/sbin/ip", ["-4", "-o", "addr", "show"], output: .pipe)
        try process.run()
        let reader = process.standardOutput
        let listing = await offThePool { () -> String in
            let data = reader?.readDataToEndOfFile() ?? Data()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let free = (0...255).filter { !listing.contains("10.213.\($0).") }
        guard let third = free.randomElement() else {
            throw RunwayError.invalidRequest(reason: "every 10.213.x subnet is taken on this host")
        }
        return "10.213.\(third)"
    }

    @Test(
        "Linux: rtnetlink reports an interface coming up in a new network namespace",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip"),
            "network namespaces need root and iproute2 (CI runs as root)"))
    func rtnetlinkSeesALinkComeUp() async throws {
        let namespace = "runway-\(UUID().uuidString.prefix(8).lowercased())"
        try await Self.ip(["netns", "add", namespace])
        let process = ChildProcess(
            "/usr/sbin/ip", ["netns", "exec", namespace, runwayExecutable().path, "network", "--watch", "2"], output: .pipe)
        try await withCleanup({
            if process.isRunning { process.terminate() }
            try? await Self.ip(["netns", "del", namespace])
        }) {
            try process.run()
            guard let output = process.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
            // Only loopback, and it is down: nothing is reachable.
            let first = await line(of: output)
            #expect(first.contains(#""reachable":false"#), "\(first)")
            // A veth pair with an address comes up: a subnet of its own, no way beyond it — still
            // unreachable, so no line. With a default route, the monitor hears it from the kernel.
            try await Self.ip(["-n", namespace, "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
            try await Self.ip(["-n", namespace, "addr", "add", "10.77.0.1/24", "dev", "v0"])
            try await Self.ip(["-n", namespace, "link", "set", "v1", "up"])
            try await Self.ip(["-n", namespace, "link", "set", "v0", "up"])
            try await Self.ip(["-n", namespace, "route", "add", "default", "via", "10.77.0.2"])
            let second = await line(of: output)
            #expect(second.contains(#""reachable":true"#), "\(second)")
            // The default route goes, the link stays up with its address: unreachable again.
            try await Self.ip(["-n", namespace, "route", "del", "default"])
            let third = await line(of: output)
            #expect(third.contains(#""reachable":false"#), "\(third)")
        }
    }

    @Test(
        "Linux: a load in flight ends with noNetwork(.unreachable) the moment its namespace's link loses its carrier",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip"),
            "network namespaces need root and iproute2 (CI runs as root)"))
    func linkLossEndsTheLoadInFlight() async throws {
        // The client runs in a namespace of its own; its veth peer stays here, with the server
        // on its address. Taking the peer down takes the carrier from the client's link.
        let tag = UUID().uuidString.prefix(8).lowercased()
        let namespace = "runway-\(tag)"
        let (host, inside) = ("rwh\(tag)", "rwn\(tag)")
        let subnet = try await Self.freeSubnet()
        try await Self.ip(["netns", "add", namespace])
        var process: ChildProcess?
        var server: DemoServer?
        try await withCleanup({
            server?.probe.openGate("link-loss")
            if let process, process.isRunning { process.terminate() }
            try? await Self.ip(["link", "del", host])
            try? await Self.ip(["netns", "del", namespace])
            await server?.stop()
        }) {
            try await Self.ip(["link", "add", host, "type", "veth", "peer", "name", inside, "netns", namespace])
            try await Self.ip(["addr", "add", "\(subnet).1/30", "dev", host])
            try await Self.ip(["link", "set", host, "up"])
            try await Self.ip(["-n", namespace, "addr", "add", "\(subnet).2/30", "dev", inside])
            try await Self.ip(["-n", namespace, "link", "set", inside, "up"])
            try await Self.ip(["-n", namespace, "route", "add", "default", "via", "\(subnet).1"])
            let started = try await DemoServer.start(address: "\(subnet).1")
            server = started
            let client = ChildProcess(
                "/usr/sbin/ip",
                [
                    "netns", "exec", namespace, runwayExecutable().path, "network",
                    "--get", "http://\(subnet).1:\(started.port)/faults/gate/link-loss", "--timeout", "40",
                ],
                output: .pipe)
            process = client
            try client.run()
            guard let output = client.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
            let path = await line(of: output)
            #expect(path.contains(#""reachable":true"#), "\(path)")
            // The request is at the server, held at a gate: the load is in flight.
            await started.probe.wait(for: .gateWaiting)
            try await Self.ip(["link", "set", host, "down"])
            var outcome = await line(of: output)
            if outcome.contains(#""load""#) { outcome = await line(of: output) }
            #expect(outcome.contains(#""outcome":"noNetwork.unreachable""#), "\(outcome), not the 40 s timeout")
            #expect(started.probe.count("/faults/gate/link-loss") == 1)
        }
    }

    #if os(Linux)
    @Test("Linux: only a usable default route makes an interface a way out (the kernel's reject route on lo is none)")
    func defaultRoutesFromProc() {
        let ipv4 = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            wlan0\t00000000\t0100A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0
            tun0\t00000000\t00000000\t0201\t0\t0\t0\t00000000\t0\t0\t0
            """
        let ipv6 = """
            fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth1
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
            """
        #expect(LinuxNetworkPath.defaultRouteInterfaces(ipv4: ipv4, ipv6: ipv6) == ["wlan0", "eth1"])
        let subnetOnly = ipv4.components(separatedBy: "\n").prefix(2).joined(separator: "\n")
        #expect(LinuxNetworkPath.defaultRouteInterfaces(ipv4: subnetOnly, ipv6: "").isEmpty)
    }
    #endif

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
            for _ in 0..<30 { try await log.recordCommitted("tap") }
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
            for _ in 0..<30 { try await log.recordCommitted("tap") }
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
            for _ in 0..<30 { try await impatient.recordCommitted("tap") }
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
