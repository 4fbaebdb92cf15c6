import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Runway
import RunwayNIO
import RunwayServer
import RunwayStorage

/// `runway bench --suite oplog`: what batching saves on the wire, what `record` costs its
/// caller, how fast the writer commits, and how fast a collector stores, into SQLite and (given
/// `--postgres`) PostgreSQL. The collector runs in a child process (`runway serve`).
enum OplogBench {
    static func run(events: Int, postgres: String?, logger: Logger) async throws {
        let child = try ChildServer.start()
        defer { child.stop() }
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio, logger: logger)
        try engine.register(Service(id: "oplog", baseURLs: [.release: child.baseURL]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-oplog-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        // 1. The wire: 1,000 events in batches, against one uncompressed POST per event. Bytes
        // are what the server process read (/proc/PID/io rchar), so request heads count too.
        let (reportStream, reportSink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        var policy = OperationLog.Policy()
        policy.maximumAge = .seconds(3600)
        let log = try OperationLog(
            engine: engine, service: "oplog", container: Container(root: folder.appendingPathComponent("wire")),
            policy: policy, logger: logger, onUpload: { reportSink.yield($0) })
        let before = serverBytesRead(child)
        for index in 0..<events {
            try log.record("listing.opened", payload: ["listing": .int(index), "source": "feed", "position": .int(index % 20)])
        }
        try await log.flush()
        let batchedBytes = serverBytesRead(child) - before
        await log.close()
        reportSink.finish()
        let uploads = await reportStream.reduce(into: []) { $0.append($1) }
        let single = Data(#"{"events":[{"id":"\#(UUID().uuidString.lowercased())","name":"listing.opened","time":1700000000000,"payload":{"listing":1,"position":1,"source":"feed"}}]}"#.utf8)
        let beforeSingles = serverBytesRead(child)
        for _ in 0..<events {
            _ = try await engine.perform(RawUploadAPI(), body: .data(single, contentType: "application/json")).get()
        }
        let singleBytes = serverBytesRead(child) - beforeSingles
        print("Operation log, \(events) events (collector in its own process)")
        print(
            "  uploads: \(uploads.count) (\(Int((Double(events) / 30).rounded(.up))) at 30 each; a burst waits as a backlog, in batches of up to 500); "
                + "compressed body \(uploads.reduce(0) { $0 + $1.bodyBytes }) B of \(uploads.reduce(0) { $0 + $1.uncompressedBytes }) B JSON")
        print(
            "  bytes the server read: batched \(batchedBytes) B vs one uncompressed POST per event \(singleBytes) B = "
                + String(format: "%.1f %%", Double(batchedBytes) / Double(max(singleBytes, 1)) * 100) + " (goal ≤ 15 %)")

        // 2. record on the caller's thread, and the writer's commit rate.
        var recordPolicy = OperationLog.Policy()
        recordPolicy.maximumAge = .seconds(3600)
        recordPolicy.batchSize = 1_000_000
        recordPolicy.capacity = 1_000_000
        let quiet = try OperationLog(
            engine: engine, service: "none", container: Container(root: folder.appendingPathComponent("record")),
            policy: recordPolicy, logger: logger)
        let count = 20_000
        var costs: [Duration] = []
        costs.reserveCapacity(count)
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<count {
            let t0 = clock.now
            try quiet.record("tap", payload: ["n": .int(index)])
            costs.append(clock.now - t0)
        }
        _ = try await quiet.status()  // returns once the writer committed everything before it
        let committing = clock.now - started
        await quiet.close()
        costs.sort()
        func micros(_ duration: Duration) -> String {
            String(format: "%.1f µs", Double(duration.components.attoseconds) / 1e12 + Double(duration.components.seconds) * 1e6)
        }
        print(
            "  record(): p50 \(micros(costs[count / 2])), p99 \(micros(costs[count * 99 / 100])) on the caller (goal p99 ≤ 50 µs); "
                + "writer committed \(Int(Double(count) / seconds(committing))) events/s")

        // 3. Collector ingest: batches of 30 stored in one transaction each.
        let batches = (0..<200).map { batch in
            (0..<30).map { index in
                CollectedEvent(
                    id: UUID().uuidString.lowercased(), name: "tap", timeMilliseconds: 1_700_000_000_000,
                    payload: Data(#"{"n":\#(batch * 30 + index)}"#.utf8))
            }
        }
        let sqlite = try SQLiteOperationLogStore(url: folder.appendingPathComponent("collector.sqlite"))
        print("  collector ingest, SQLite: \(Int(try await ingest(batches, into: sqlite))) events/s")
        if let postgres {
            let database = try await PostgresCollectorDatabase.connect(try ServeCommand.postgresConfiguration(postgres), logger: logger)
            let rate = try await ingest(batches, into: PostgresOperationLogStore(database: database))
            print("  collector ingest, PostgreSQL: \(Int(rate)) events/s")
            await database.close()
        } else {
            print("  collector ingest, PostgreSQL: not measured (pass --postgres postgres://user@host:port/db)")
        }
        try await nio.shutdown()

        // 4. Draining a backlog of 10,000 events left by an earlier launch, through HTTP to a
        // collector in its own process: one batch of 30 at a time (as before), then the
        // backlog batches (500, two in flight).
        try await drain(events: 10_000, server: child, store: "SQLite", folder: folder, logger: logger)
        if let postgres {
            let pgChild = try ChildServer.start(["--postgres", postgres])
            defer { pgChild.stop() }
            try await drain(events: 10_000, server: pgChild, store: "PostgreSQL", folder: folder, logger: logger)
        }
    }

    /// Queues `events` with one log, then times a second log on the same container sending them
    /// all, once with batches of 30 and once with the default backlog batches.
    static func drain(events: Int, server: ChildServer, store: String, folder: URL, logger: Logger) async throws {
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio, logger: logger)
        try engine.register(Service(id: "oplog", baseURLs: [.release: server.baseURL]))
        var rates: [(String, Double, Int, Double, Double)] = []
        let defaults = OperationLog.Policy()
        let ways = [
            ("one batch of 30 at a time", 30, 1),
            ("backlog batches", defaults.backlogBatchSize, defaults.maximumConcurrentUploads),
        ]
        for (label, backlogBatchSize, concurrent) in ways {
            let container = Container(root: folder.appendingPathComponent("drain-\(store)-\(backlogBatchSize)"))
            var holding = OperationLog.Policy()
            holding.batchSize = .max / 4
            holding.capacity = events
            let queueing = try OperationLog(
                engine: engine, service: "oplog", container: container, policy: holding, logger: logger)
            for index in 0..<events {
                try queueing.record("listing.opened", payload: ["listing": .int(index), "source": "feed", "position": .int(index % 20)])
            }
            _ = try await queueing.status()
            await queueing.close()
            var policy = OperationLog.Policy()
            policy.backlogBatchSize = backlogBatchSize
            policy.maximumConcurrentUploads = concurrent
            policy.capacity = events
            let uploads = NIOLockedValueBox(0)
            let clock = ContinuousClock()
            let (clientCPU, serverCPU) = (processCPUSeconds(), processCPUSeconds(server.process.processIdentifier))
            let started = clock.now
            let draining = try OperationLog(
                engine: engine, service: "oplog", container: container, policy: policy, logger: logger,
                onUpload: { _ in uploads.withLockedValue { $0 += 1 } })
            try await draining.flush()
            let elapsed = clock.now - started
            let perEvent = { (used: Double) in used / Double(events) * 1e6 }
            let cpu = (perEvent(processCPUSeconds() - clientCPU), perEvent(processCPUSeconds(server.process.processIdentifier) - serverCPU))
            let status = try await draining.status()
            await draining.close()
            guard status.uploaded == events else {
                throw OplogBenchError.incomplete("drain to \(store): \(status.uploaded) of \(events) uploaded")
            }
            rates.append((label, Double(events) / seconds(elapsed), uploads.withLockedValue { $0 }, cpu.0, cpu.1))
        }
        let line = rates.map {
            "\($0.0) \(Int($0.1)) events/s in \($0.2) uploads (CPU per event: client "
                + String(format: "%.1f µs, server %.1f µs)", $0.3, $0.4)
        }.joined(separator: ", ")
        print(
            "  backlog of \(events) drained to \(store): \(line): "
                + String(format: "%.1f×", rates[1].1 / rates[0].1) + " (goal ≥ 5×)")
        try await nio.shutdown()
    }

    static func ingest(_ batches: [[CollectedEvent]], into store: any OperationLogStore) async throws -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        for batch in batches { _ = try await store.store(batch) }
        return Double(batches.count * 30) / seconds(clock.now - started)
    }

    /// CPU seconds (user and system) a process has used: this one, or `pid` from /proc; 0 where
    /// /proc does not exist.
    static func processCPUSeconds(_ pid: Int32? = nil) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Bytes the child server has read through system calls (sockets included), from
    /// /proc/PID/io; 0 where the file does not exist.
    static func serverBytesRead(_ child: ChildServer) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(child.process.processIdentifier)/io", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rchar:") }),
            let value = Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
        else { return 0 }
        return value
    }
}

/// One event per request, uncompressed: the baseline batching is measured against.
struct RawUploadAPI: API {
    var service: ServiceID { "oplog" }
    var path: String { "/upload/raw" }
    var method: HTTPRequest.Method { .post }
    var responseFormat: ResponseFormat { .raw }
}

enum OplogBenchError: Error {
    case incomplete(String)
}
