import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Runway
import RunwayExamples
import RunwayServer

/// `runway bench --suite collectors --postgres URL`: ingest with 1, 2 and 3 `runway serve`
/// processes on one PostgreSQL database, each verifying signatures with the shared nonce store —
/// the scale-out story, measured. Batches of 30 (what a device sends) are signed before the clock
/// starts and spread over the processes in turn, 16 in flight.
///
/// Run twice: with each collector held to a quarter of a core (a cgroup v1 CPU quota, as root),
/// so that the collectors and not this machine's two cores are the limit — what adding a process
/// buys when each has its own machine — and unlimited, where the client, the collectors and
/// PostgreSQL share the cores.
enum ScaleOutBench {
    static let batches = 2_000
    static let eventsPerBatch = 30
    static let inFlight = 16

    static func run(postgres: String) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        print("Collector processes on one PostgreSQL (\(postgres)): \(batches) signed batches of \(eventsPerBatch) events, \(inFlight) in flight, round robin")
        for cores in [0.25, nil] {
            if let cores {
                guard CPUQuota.isAvailable else {
                    print("  each process held to \(cores) core: not measured (needs root and the cgroup v1 cpu controller at /sys/fs/cgroup/cpu)")
                    continue
                }
                print("  each process held to \(cores) core:")
            } else {
                print("  unlimited (client, collectors and PostgreSQL share this machine's \(ProcessInfo.processInfo.activeProcessorCount) cores):")
            }
            try await lines(postgres: postgres, cores: cores, client: client)
        }
    }

    static func lines(postgres: String, cores: Double?, client: HTTPClient) async throws {
        var first: Double?
        for count in 1...3 {
            var children: [ChildServer] = []
            var quotas: [CPUQuota] = []
            defer {
                for child in children { child.stop() }
                for quota in quotas { quota.remove() }
            }
            for _ in 0..<count {
                let child = try ChildServer.start(["--postgres", postgres], verifying: true)
                children.append(child)
                if let cores, let quota = CPUQuota(cores: cores, name: "runway-collector-\(child.process.processIdentifier)") {
                    quota.add(child.process.processIdentifier)
                    quotas.append(quota)
                }
            }
            let requests = try (0..<batches).map { index in
                try signedBatch(to: children[index % count].baseURL)
            }
            // Warm: each process's pool has a connection and its routes have run once.
            for child in children { _ = try await send(try signedBatch(to: child.baseURL), client: client) }
            let pids = children.map(\.process.processIdentifier)
            let cpuBefore = pids.map { OplogBench.processCPUSeconds($0) }
            let next = NIOLockedValueBox(0)
            let failures = NIOLockedValueBox(0)
            let clock = ContinuousClock()
            let started = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<inFlight {
                    group.addTask {
                        while true {
                            let index = next.withLockedValue { value -> Int in
                                value += 1
                                return value - 1
                            }
                            guard index < requests.count else { return }
                            if try await send(requests[index], client: client) != 200 { failures.withLockedValue { $0 += 1 } }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let seconds = OplogBench.seconds(clock.now - started)
            let cpu = zip(pids, cpuBefore).reduce(0) { $0 + OplogBench.processCPUSeconds($1.0) - $1.1 }
            let rate = Double(batches * eventsPerBatch) / seconds
            let ratio = first.map { String(format: " (%.2f× one process)", rate / $0) } ?? ""
            if first == nil { first = rate }
            print(
                "    \(count) process\(count == 1 ? "" : "es"): \(Int(rate)) events/s\(ratio); collectors' CPU "
                    + String(format: "%.1f µs", cpu / Double(batches * eventsPerBatch) * 1e6)
                    + " per event; \(failures.withLockedValue { $0 }) refused")
        }
    }

    /// A batch of new events, gzip-compressed and signed with the demo key for `baseURL`.
    static func signedBatch(to baseURL: String) throws -> (url: String, head: HTTPRequest, body: Data) {
        let events = (0..<eventsPerBatch).map { index in
            #"{"id":"\#(UUID().uuidString)","name":"listing.opened","time":1700000000000,"payload":{"listing":\#(index),"source":"feed"}}"#
        }
        let body = try Gzip.compress(Data(#"{"events":[\#(events.joined(separator: ","))]}"#.utf8))
        var head = HTTPRequest(
            method: .post, scheme: "http", authority: baseURL.replacingOccurrences(of: "http://", with: ""),
            path: "/oplog/batches")
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentEncoding] = "gzip"
        try HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret).sign(
            &head, body: body, context: SigningContext(apiName: "bench", service: "oplog", attempt: 1))
        return (baseURL + "/oplog/batches", head, body)
    }

    static func send(_ request: (url: String, head: HTTPRequest, body: Data), client: HTTPClient) async throws -> Int {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .POST
        for field in request.head.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        let response = try await client.execute(outgoing, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }
}
