import AsyncHTTPClient
import Foundation
import NIOCore
import Runway
import RunwayServer

/// `runway bench --suite hostile`: what a refused hostile batch costs the collector — CPU per
/// request and peak resident memory, one at a time and 16 at once — against `runway serve` in
/// its own process, beside what an honest batch of 1,000 events costs. The limits are counted
/// while the batch is parsed, so these numbers are bounded by the limits, not by the input.
enum HostileBench {
    /// One kind of batch: its gzip body and the answer it should get.
    struct Case {
        var name: String
        var body: Data
        var status: Int
        var reason: String?
    }

    static func run() async throws {
        let child = try ChildServer.start()
        defer { child.stop() }
        let pid = child.process.processIdentifier
        let limits = OperationLogCollector.Limits()
        let cases = try Self.cases(limits: limits)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        // Warm: the store open, the routes and the inflater touched once.
        _ = try await post(cases[0].body, to: child.baseURL, client: client)
        print("Hostile batches against runway serve (own process, SQLite store, default limits: \(limits.maximumEvents) events, \(limits.maximumValues) values, \(limits.maximumInflatedSize >> 20) MB inflated)")
        print("  resident at rest: \(residentKilobytes(pid, "VmRSS") / 1024) MB; peaks are the whole process's resident size")
        print("  " + "batch".padding(toLength: 48, withPad: " ", startingAt: 0) + "gzip     answer                  CPU/request   peak MB: 1 at a time / 16 at once")
        for item in cases {
            // One at a time, 16 times: CPU per request and the peak of any one.
            ProcessStatus.resetPeak(pid: pid)
            let cpuBefore = OplogBench.processCPUSeconds(pid)
            var answer = ""
            for _ in 0..<16 {
                let (status, reason) = try await post(item.body, to: child.baseURL, client: client)
                answer = "\(status) \(reason ?? "")"
                guard status == item.status, reason == item.reason else {
                    throw HostileBenchError.unexpectedAnswer(item.name, answer)
                }
            }
            let cpu = (OplogBench.processCPUSeconds(pid) - cpuBefore) / 16
            let single = residentKilobytes(pid, "VmHWM")
            // 16 at once: the peak of a burst.
            ProcessStatus.resetPeak(pid: pid)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask { _ = try await post(item.body, to: child.baseURL, client: client) }
                }
                try await group.waitForAll()
            }
            let burst = residentKilobytes(pid, "VmHWM")
            print(
                "  " + item.name.padding(toLength: 48, withPad: " ", startingAt: 0)
                    + "\(item.body.count / 1024) KB".padding(toLength: 9, withPad: " ", startingAt: 0)
                    + answer.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(format: "%6.1f ms     %4d / %4d", cpu * 1000, single / 1024, burst / 1024))
        }
        print("  resident after: \(residentKilobytes(pid, "VmRSS") / 1024) MB")
        try await crowd(cases.first { $0.reason == "too_many_values" } ?? cases[1])
    }

    /// 200 of `item` at once against a collector with the default cap on parallel batches, a
    /// cap of 1, and none (a cap of 100,000): the peak resident size of each, and how many were
    /// answered 503 `busy`. The parse runs on Swift's cooperative pool, one thread per
    /// processor, so below the cap the processors bound the batches parsed at once; the cap is
    /// what bounds them where a host has many.
    static func crowd(_ item: Case) async throws {
        print("200 hostile batches at once (\(item.name)): peak resident MB, answers")
        let runs: [(String, [String])] = [
            ("default cap (2 per processor)", []), ("a cap of 1", ["--max-parallel-batches", "1"]),
            ("no cap", ["--max-parallel-batches", "100000"]),
        ]
        for (label, arguments) in runs {
            let child = try ChildServer.start(arguments)
            defer { child.stop() }
            let pid = child.process.processIdentifier
            // 200 connections at once: AsyncHTTPClient keeps 8 per host unless asked for more.
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { _ = client.shutdown() }
            _ = try await post(item.body, to: child.baseURL, client: client)
            let rest = residentKilobytes(pid, "VmRSS")
            ProcessStatus.resetPeak(pid: pid)
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let (status, reason) = try await post(item.body, to: child.baseURL, client: client)
                        return "\(status) \(reason ?? "")"
                    }
                }
                var counts: [String: Int] = [:]
                for try await answer in group { counts[answer, default: 0] += 1 }
                return counts
            }
            let peak = residentKilobytes(pid, "VmHWM")
            let summary = answers.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
            print("  " + label.padding(toLength: 32, withPad: " ", startingAt: 0) + "at rest \(rest / 1024) MB, peak \(peak / 1024) MB; \(summary)")
        }
    }

    /// An honest full batch first (the yardstick), then the hostile ones, each small on the wire.
    static func cases(limits: OperationLogCollector.Limits) throws -> [Case] {
        // `[{},{},…]` filling what is left of the inflated limit around `prefix` and `suffix`.
        func filled(_ prefix: String, _ suffix: String) -> Data {
            let room = limits.maximumInflatedSize - prefix.utf8.count - suffix.utf8.count
            return Data((prefix + "[" + String(repeating: "{},", count: (room - 4) / 3) + "{}]" + suffix).utf8)
        }
        let honest = (0..<limits.maximumEvents).map { index in
            #"{"id":"\#(UUID().uuidString)","name":"listing.opened","time":1700000000000,"payload":{"listing":\#(index),"source":"feed","position":\#(index % 20)}}"#
        }
        let oneEvent = #"{"id":"e1","name":"tap","time":1,"payload":{}}"#
        let string = #"{"events":[{"id":"s1","name":"tap","time":1,"payload":""#
        let longString = string + String(repeating: "x", count: limits.maximumInflatedSize - string.utf8.count - 4) + #""}]}"#
        return [
            Case(
                name: "honest: 1,000 events (then duplicates)",
                body: try Gzip.compress(Data(#"{"events":[\#(honest.joined(separator: ","))]}"#.utf8)), status: 200, reason: nil),
            Case(
                name: "8 MB of [{},{},…] as events", body: try Gzip.compress(filled(#"{"events":"#, "}"), level: 9),
                status: 413, reason: "too_many_events"),
            Case(
                name: "8 MB of [{},{},…] beside one event",
                body: try Gzip.compress(filled(#"{"events":[\#(oneEvent)],"pad":"#, "}"), level: 9), status: 413,
                reason: "too_many_values"),
            Case(
                name: "8 MB of [{},{},…] in one payload",
                body: try Gzip.compress(filled(#"{"events":[{"id":"p1","name":"tap","time":1,"payload":"#, "}]}"), level: 9),
                status: 413, reason: "too_many_values"),
            Case(
                name: "one 8 MB string in a payload (refused event)", body: try Gzip.compress(Data(longString.utf8), level: 9),
                status: 200, reason: nil),
            Case(
                name: "64 MB of zeros (zip bomb)", body: try Gzip.compress(Data(count: 64 << 20), level: 9), status: 413,
                reason: "inflated_too_large"),
        ]
    }

    static func post(_ body: Data, to baseURL: String, client: HTTPClient) async throws -> (Int, String?) {
        var request = HTTPClientRequest(url: baseURL + "/oplog/batches")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "content-encoding", value: "gzip")
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let json = try? JSON(parsing: Data(buffer: bytes))
        return (Int(response.status.code), json?["reason"]?.stringValue)
    }

    /// `field` of the child's `/proc/PID/status` in kilobytes (0 off Linux).
    static func residentKilobytes(_ pid: Int32, _ field: String) -> Int {
        ProcessStatus.kilobytes(field, pid: pid) ?? 0
    }
}

enum HostileBenchError: Error {
    case unexpectedAnswer(String, String)
}
