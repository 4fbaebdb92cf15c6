import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
@testable import Runway
import RunwayTestSupport
import Testing

/// `runway serve`'s `/metrics`, scraped as Prometheus would and parsed by prometheus_client.
@Suite("runway serve exposes Prometheus metrics", .timeLimit(.minutes(10)))
struct ServeMetricsTests {
    struct Sample: Decodable {
        var family: String
        var type: String
        var name: String
        var labels: [String: String]
        var value: Double
    }

    @Test("/metrics counts batches, events by result and reason, batch sizes, verifier refusals, the nonce store and request durations")
    func scrape() async throws {
        try #require(await offThePool { PythonTools.has("prometheus_client") }, "prometheus_client is missing: \(PythonTools.installHint)")
        let (process, baseURL, banner) = try await startServe([]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let hex = try #require(banner.last?.components(separatedBy: "secret ").last?.split(separator: " ").first.map(String.init))
        let key = (id: "runway-demo-2026", secret: SymmetricKey(data: try #require(RequestSignature.bytes(fromHex: hex))))

        let event = #"{"id":"\#(UUID().uuidString)","name":"tap","time":1700000000000,"payload":{}}"#
        let once = try Gzip.compress(Data(#"{"events":[\#(event)]}"#.utf8))
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: key, body: once).0 == 200)
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: key, body: once).0 == 200)  // a duplicate
        let mixed = try Gzip.compress(
            Data(#"{"events":[{"id":"\#(UUID().uuidString)","name":"tap","time":1700000000000,"payload":{}},{"id":"x1","time":1}]}"#.utf8))
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: key, body: mixed).0 == 200)
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: key, body: Data("not gzip".utf8)).1 == "not_gzip")
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: nil).1 == "missing_header")
        #expect(try await ServeVerifiesTests.post(to: baseURL, signedWith: ("someone-else", key.secret)).1 == "unknown_key")

        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: baseURL + "/metrics"), timeout: .seconds(30))
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let exposition = Data(buffer: try await response.body.collect(upTo: 4 << 20))
        let samples = try JSONDecoder().decode(
            [Sample].self,
            from: await offThePool {
                try PythonTools.run([Fixtures.folder.appendingPathComponent("read-metrics.py").path], input: exposition)
            })
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }

        #expect(value("runway_collector_batches_total", ["outcome": "accepted"]) == 3)
        #expect(value("runway_collector_batches_total", ["outcome": "not_gzip"]) == 1)
        #expect(value("runway_collector_events_total", ["result": "stored", "reason": ""]) == 2)
        #expect(value("runway_collector_events_total", ["result": "duplicate", "reason": ""]) == 1)
        #expect(value("runway_collector_events_total", ["result": "refused", "reason": "missing"]) == 1)
        #expect(samples.first { $0.name == "runway_collector_batch_events_count" }?.type == "histogram")
        #expect(value("runway_collector_batch_events_count") == 3)
        #expect(value("runway_collector_batch_events_sum") == 4)
        #expect(value("runway_collector_batch_events_bucket", ["le": "1.0"]) == 2)
        #expect(value("runway_verifier_refusals_total", ["reason": "missing_header"]) == 1)
        #expect(value("runway_verifier_refusals_total", ["reason": "unknown_key"]) == 1)
        // Four signed requests reached the nonce store: both copies of the first batch, the
        // mixed one and the one that was not gzip.
        #expect(value("runway_nonce_store_entries") == 4)
        #expect(value("runway_nonce_store_capacity") == 750_000)
        let durations = samples.filter {
            $0.name == "http_server_request_duration_seconds_count" && $0.labels["http_route"] == "/oplog/batches"
        }
        #expect(durations.reduce(0) { $0 + $1.value } == 6)
        let requests = samples.filter { $0.name == "hb_requests_total" && $0.labels["http_route"] == "/oplog/batches" }
        #expect(requests.reduce(0) { $0 + $1.value } == 6)
        #expect(samples.first { $0.name == "hb_requests_total" }?.type == "counter")
    }

    /// `/metrics` of a `runway serve` that has served nothing yet, parsed.
    static func scrapeAtStart() async throws -> (exposition: Data, samples: [Sample]) {
        let (process, baseURL, _) = try await startServe([]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: baseURL + "/metrics"), timeout: .seconds(30))
        let exposition = Data(buffer: try await response.body.collect(upTo: 4 << 20))
        let samples = try JSONDecoder().decode(
            [Sample].self,
            from: await offThePool {
                try PythonTools.run([Fixtures.folder.appendingPathComponent("read-metrics.py").path], input: exposition)
            })
        return (exposition, samples)
    }

    @Test("Before any request every Runway family is there, each counter at zero for every value of its dimensions, the nonce store's gauges too")
    func familiesStartAtZero() async throws {
        try #require(await offThePool { PythonTools.has("prometheus_client") }, "prometheus_client is missing: \(PythonTools.installHint)")
        let (_, samples) = try await Self.scrapeAtStart()
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        for outcome in ["accepted", "busy", "not_gzip", "store_unavailable", "too_many_values"] {
            #expect(value("runway_collector_batches_total", ["outcome": outcome]) == 0, "\(outcome)")
        }
        #expect(value("runway_collector_events_total", ["result": "stored", "reason": ""]) == 0)
        #expect(value("runway_collector_events_total", ["result": "refused", "reason": "store_refused"]) == 0)
        for reason in ["bad_signature", "replayed_nonce", "nonce_store_full", "nonce_quota_exceeded"] {
            #expect(value("runway_verifier_refusals_total", ["reason": reason]) == 0, "\(reason)")
        }
        #expect(value("runway_collector_batch_events_count") == 0)
        #expect(value("runway_nonce_store_entries") == 0)
        #expect(value("runway_nonce_store_capacity") == 750_000)
        #expect(samples.allSatisfy { $0.type != "counter" || $0.name.hasSuffix("_total") || $0.name.hasSuffix("_created") })
    }

    @Test("promtool check metrics finds nothing wrong in the names, types and units (help text aside: swift-prometheus's factory writes none)")
    func promtoolAgrees() async throws {
        let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let path = try #require(promtool, "promtool is missing: Scripts/test installs Debian's prometheus package")
        // After traffic, so that Hummingbird's own families are there too.
        let (process, baseURL, _) = try await startServe([]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        _ = try await ServeVerifiesTests.post(to: baseURL, signedWith: nil)
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: baseURL + "/metrics"), timeout: .seconds(30))
        let exposition = Data(buffer: try await response.body.collect(upTo: 4 << 20))
        #expect(String(decoding: exposition, as: UTF8.self).contains("hb_requests_total"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-promtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("metrics.txt")
        try exposition.write(to: input)
        let output = folder.appendingPathComponent("promtool.out").path
        let child = ChildProcess("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", path, input.path], output: .file(output), error: .output)
        try await offThePool {
            try child.run()
            child.waitUntilExit()
        }
        let problems = (try String(contentsOfFile: output, encoding: .utf8)).split(separator: "\n")
            .filter { !$0.hasSuffix("no help text") }
        #expect(problems.isEmpty, "\(problems)")
    }
}
