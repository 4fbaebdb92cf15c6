import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
@testable import Runway
import RunwayTestSupport
import Testing

/// `runway serve`'s `/metrics`, scraped as Prometheus would and parsed by prometheus_client.
@Suite("runway serve exposes Prometheus metrics", .timeLimit(.minutes(1)))
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
        try #require(PythonTools.has("prometheus_client"), "prometheus_client is missing: \(PythonTools.installHint)")
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
            from: PythonTools.run(
                [Fixtures.folder.appendingPathComponent("read-metrics.py").path], input: exposition))
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
            $0.name == "http_server_request_duration_count" && $0.labels["http_route"] == "/oplog/batches"
        }
        #expect(durations.reduce(0) { $0 + $1.value } == 6)
    }
}
