import Foundation
import RunwayTestSupport
import Testing

/// `runway demo`, end to end in child processes: it exits 0 only when every chapter saw what
/// it expected, and its JSON summary carries figures measured in the run.
@Suite("Demo", .timeLimit(.minutes(10)))
struct DemoTests {
    @Test("runway demo --json --metrics --har: every chapter passes, with the figures of the run and a HAR of its requests")
    func demoRunsEndToEnd() async throws {
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("runway-demo-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: har) }
        let (status, summary, output) = try await runDemo(["--json", "--metrics", "--har", har.path])
        #expect(status == 0, "\(output)")
        #expect(summary["passed"] as? Bool == true)
        let chapters = try #require(summary["chapters"] as? [[String: Any]])
        #expect(chapters.map { $0["name"] as? String } == [
            "services", "signing", "reformers", "validation", "strategies", "landing", "pagination", "retries", "cache",
            "offline", "memory", "oplog", "outbox", "openapi", "endpoints", "storage", "waterfall",
        ])
        for chapter in chapters {
            #expect(chapter["status"] as? String == "passed", "\(chapter)")
        }
        let figures = Dictionary(uniqueKeysWithValues: chapters.map { ($0["name"] as? String ?? "", $0["figures"] as? [String: Any] ?? [:]) })
        #expect(figures["signing"]?["tamperedReason"] as? String == "bad_signature")
        #expect(figures["reformers"]?["rows"] as? Int == 30)
        #expect(figures["validation"]?["sentForInvalid"] as? Int == 0)
        #expect(figures["pagination"]?["items"] as? Int == 45)
        #expect(figures["retries"]?["attempts"] as? Int == 3)
        #expect(figures["cache"]?["origins"] as? [String] == ["network", "memory", "disk"])
        #expect(figures["cache"]?["burstRequests"] as? Int == 1)
        #expect(figures["offline"]?["offlineRequests"] as? Int == 0)
        // 90 events in whole batches of 30: one upload when the writer committed them together.
        let uploads = try #require(figures["oplog"]?["uploads"] as? [Int])
        #expect(uploads.reduce(0, +) == 90 && uploads.allSatisfy { $0.isMultiple(of: 30) })
        #expect(figures["oplog"]?["stored"] as? Int == 95)
        #expect(figures["outbox"]?["applied"] as? Int == 5)
        #expect(figures["outbox"]?["positions"] as? [Int] == [0, 1, 2, 3, 4])
        #expect(figures["openapi"]?["listingRequests"] as? Int == 1)
        #expect(figures["openapi"]?["refreshes"] as? Int == 1)
        #expect(figures["openapi"]?["flakyAttempt"] as? Int == 3)
        #expect(figures["endpoints"]?["chosen"] as? String == "127.0.0.1")
        // The waterfall: the list asked three times made one request; every load of the demo
        // in --json with its phases.
        #expect(figures["waterfall"]?["listRequests"] as? Int == 1)
        let loads = try #require(figures["waterfall"]?["loads"] as? [[String: Any]])
        #expect(loads.count > 30)
        #expect(loads.allSatisfy { $0["durationMs"] is Double && $0["phases"] is [String: Any] })

        // The HAR file, read by haralyzer: every request the app's engines sent — all on the
        // wire but the endpoint probes and the signing chapter's hand-made replay.
        let harPath = har.path
        let read = try await offThePool {
            try PythonTools.run([Fixtures.folder.appendingPathComponent("read-har.py").path, harPath], input: Data())
        }
        let entries = try #require((try JSONSerialization.jsonObject(with: read) as? [String: Any])?["entries"] as? [[String: Any]])
        let requests = try #require(summary["requests"] as? Int)
        let probes = try #require(summary["endpointProbes"] as? Int)
        let aroundTheEngine = try #require(figures["signing"]?["requestsAroundTheEngine"] as? Int)
        #expect(entries.count == requests - probes - aroundTheEngine)
        #expect(entries.count == summary["recordedRequests"] as? Int)
        for entry in entries {
            let time = try #require(entry["time"] as? Double)
            let phases = try #require(entry["phases"] as? Double)
            #expect(abs(time - phases) < 0.001, "\(entry["url"] ?? "?")")
        }

        let metrics = try #require(summary["metrics"] as? [String])
        #expect(metrics.contains("runway_loads_total {api=OperationLogUpload service=oplog outcome=success} \(uploads.count + 1)"))
    }

    @Test("runway demo --server runs against runway serve in another process, skipping only the in-process chapters")
    func demoAgainstServe() async throws {
        let server = try await ChildDemoServer()
        let result = await Result { try await runDemo(["--server", server.baseURL, "--json"]) }
        await server.stop()
        let (status, summary, output) = try result.get()
        #expect(status == 0, "\(output)")
        let chapters = try #require(summary["chapters"] as? [[String: Any]])
        let skipped = chapters.filter { $0["status"] as? String == "skipped" }.compactMap { $0["name"] as? String }
        #expect(skipped == ["strategies", "landing", "endpoints"])
        #expect(chapters.filter { $0["status"] as? String == "passed" }.count == chapters.count - 3)
    }

    @Test("a chapter that does not see what it expects names itself and why, and the demo exits 1")
    func failingChapter() async throws {
        // Nothing listens on port 1: the chapter's loads cannot reach a server.
        let (status, summary, output) = try await runDemo(["--server", "http://127.0.0.1:1", "--chapter", "pagination", "--json"])
        #expect(status == 1, "\(output)")
        #expect(summary["passed"] as? Bool == false)
        let chapter = try #require((summary["chapters"] as? [[String: Any]])?.first)
        #expect(chapter["name"] as? String == "pagination")
        #expect(chapter["status"] as? String == "failed")
        #expect((chapter["reason"] as? String)?.isEmpty == false)
    }

    @Test("an unknown chapter is refused with the list of chapters")
    func unknownChapter() async throws {
        let (status, _, output) = try await runDemo(["--chapter", "nope"], parse: false)
        #expect(status != 0)
        #expect(output.contains("no chapter nope"))
        #expect(output.contains("services, signing"))
    }

    /// Runs `runway demo` with `arguments`; its exit status, its last line of standard output
    /// as JSON, and everything it printed.
    private func runDemo(_ arguments: [String], parse: Bool = true) async throws -> (Int32, [String: Any], String) {
        let process = ChildProcess(
            "/usr/bin/nice", ["-n", "19", runwayExecutable().path, "demo"] + arguments, output: .pipe, error: .output)
        try process.run()
        let reader = process.standardOutput
        let text = try await offThePool {
            defer { process.waitUntilExit() }
            return String(decoding: try reader?.readToEnd() ?? Data(), as: UTF8.self)
        }
        guard parse else { return (process.terminationStatus, [:], text) }
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        let summary = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        return (process.terminationStatus, summary, text)
    }
}
