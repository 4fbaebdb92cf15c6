import Foundation
import Logging
@testable import Runway
import RunwayNIO
import RunwayServer
import Testing

/// Reachability: the Linux monitor against a real network namespace, and what the engine, the
/// operation log and endpoint selectors do with the path.
@Suite("Network monitor", .timeLimit(.minutes(1)))
struct NetworkMonitorTests {
    /// Runs `ip` with `arguments` and waits for it.
    static func ip(_ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        await offThePool { process.waitUntilExit() }
        guard process.terminationStatus == 0 else {
            throw RunwayError.invalidRequest(reason: "ip \(arguments.joined(separator: " ")) failed")
        }
    }

    /// Reads one line from `reader`, off the pool.
    static func line(_ reader: FileHandle) async -> String {
        await offThePool {
            var bytes = Data()
            while true {
                let byte = reader.readData(ofLength: 1)
                if byte.isEmpty || byte == Data([0x0A]) { break }
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test(
        "Linux: rtnetlink reports an interface coming up in a new network namespace",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip"),
            "network namespaces need root and iproute2 (CI runs as root)"))
    func rtnetlinkSeesALinkComeUp() async throws {
        let namespace = "runway-\(UUID().uuidString.prefix(8).lowercased())"
        try await Self.ip(["netns", "add", namespace])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", namespace, runwayExecutable().path, "network", "--watch", "1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try await withCleanup({
            if process.isRunning { process.terminate() }
            try? await Self.ip(["netns", "del", namespace])
        }) {
            try process.run()
            // Only loopback, and it is down: nothing is reachable.
            let first = await Self.line(output.fileHandleForReading)
            #expect(first.contains(#""reachable":false"#), "\(first)")
            // A veth pair with an address comes up: the monitor hears it from the kernel.
            try await Self.ip(["-n", namespace, "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
            try await Self.ip(["-n", namespace, "addr", "add", "10.77.0.1/24", "dev", "v0"])
            try await Self.ip(["-n", namespace, "link", "set", "v1", "up"])
            try await Self.ip(["-n", namespace, "link", "set", "v0", "up"])
            let second = await Self.line(output.fileHandleForReading)
            #expect(second.contains(#""reachable":true"#), "\(second)")
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
            let api = TestAPI(path: "/echo/offline", timeout: .seconds(20), retryPolicy: .default)
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
                engine: engine, service: "oplog", container: fixture.container, configuration: CollectorFixture.configuration,
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
            var configuration = CollectorFixture.configuration
            configuration.deferOnExpensivePath = .seconds(3600)
            let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
            let log = try OperationLog(
                engine: engine, service: "oplog", container: fixture.container, configuration: configuration,
                onUpload: { sink.yield($0) })
            for _ in 0..<30 { try await log.recordCommitted("tap") }
            #expect(try await log.status().uploaded == 0)
            #expect(try await fixture.store.summary().events == 0, "a full batch waits on cellular")
            monitor.update(.wired)
            #expect(await reports.first(1).map(\.eventCount) == [30])
            await log.close()

            // With a short limit, the batch goes on cellular once the limit has passed.
            monitor.update(cellular)
            configuration.deferOnExpensivePath = .milliseconds(50)
            let (impatientReports, impatientSink) = AsyncStream<OperationLog.UploadReport>.makeStream()
            let impatient = try OperationLog(
                engine: engine, service: "oplog", container: fixture.container, configuration: configuration,
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
        let selector = EndpointSelector(host: "api.runway.test", port: server.port, candidates: ["127.0.0.1"])
        try await withCleanup({
            selector.stop()
            try? await transport.shutdown()
            await server.stop()
        }) {
            try engine.register(
                Service(id: .test, baseURLs: [.release: "http://api.runway.test:\(server.port)"], endpoints: selector))
            await selector.waitForRound(after: 0)
            #expect(selector.address == "127.0.0.1")
            monitor.update(.unreachable)
            monitor.update(.wired)
            await selector.waitForRound(after: 1)
            #expect(selector.rounds >= 2)
        }
    }
}
