import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayServer
import RunwayTestSupport
import Testing

@Suite("Phase timings on every answer, and HAR files a reader nobody here wrote opens", .timeLimit(.minutes(10)))
@MainActor
struct RecordingTests {
    @Test("every answer says how long each phase took, what was skipped and what its transport cannot report", arguments: TransportKind.allCases)
    func phaseTimings(_ kind: TransportKind) async throws {
        try await withServer(kind) { transport, server in
            let engine = Engine(transport: transport, cache: try ResponseCache(), metrics: nil)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            var api = AdHocAPI(path: "/echo/timed")
            api.cachePolicy = .memory(lifetime: .seconds(3600))
            let manager = APIManager(api, engine: engine)
            _ = try await manager.load(reformedBy: EchoedFields())
            let network = try #require(manager.rawResponse?.timings)
            for phase in [PhaseTimings.Phase.cacheLookup, .firstByte, .body, .parse, .reform] {
                guard case .took = network.status(of: phase) else {
                    Issue.record("\(phase) was not measured: \(network.status(of: phase))")
                    continue
                }
            }
            // Neither AsyncHTTPClient nor Linux's URLSession reports its connection's phases.
            #if os(Linux)
            for phase in [PhaseTimings.Phase.connectionWait, .dns, .connect, .tls, .send] {
                #expect(network.status(of: phase) == .notReported)
            }
            #endif

            let cached = try await engine.perform(api).get()
            #expect(cached.origin.isCached)
            guard case .took = cached.timings.status(of: .cacheLookup) else {
                Issue.record("the lookup of a hit was not measured")
                return
            }
            for phase in PhaseTimings.Phase.exchange + [.parse] {
                #expect(cached.timings.status(of: phase) == .skipped, "\(phase)")
            }
        }
    }

    @Test("a HAR file of a recorder's exchanges opens in haralyzer: one entry per request on the wire, phases that add up")
    func httpArchive() async throws {
        try #require(await offThePool { PythonTools.has("haralyzer") }, "haralyzer is missing: \(PythonTools.installHint)")
        try await withServer { transport, server in
            let recorder = LoadRecorder(bodyLimit: 64)
            let engine = Engine(transport: transport, cache: try ResponseCache(), metrics: nil, recorder: recorder)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            // A redirect (two requests), a POST with a body, a cached GET asked twice (one
            // request), and a 404.
            var secret = AdHocAPI(path: "/faults/redirect-to/302/echo/moved")
            secret.headers = [.authorization: "Bearer s3cret-token"]
            _ = try await engine.perform(secret).get()
            var post = AdHocAPI(path: "/echo/posted", method: .post)
            post.paramEncoding = .json
            _ = try await engine.perform(post, params: ["title": "bike"]).get()
            var cached = AdHocAPI(path: "/echo/cached")
            cached.cachePolicy = .memory(lifetime: .seconds(3600))
            _ = try await engine.perform(cached).get()
            _ = try await engine.perform(cached).get()
            _ = await engine.perform(AdHocAPI(path: "/no/such/route"))
            let onTheWire = 5
            // The server saw them all but the 404's (no route counts it).
            #expect(server.probe.count("/echo") + server.probe.count("/faults/redirect") == onTheWire - 1)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("runway-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try await recorder.writeHTTPArchive(to: file)
            struct Read: Decodable {
                struct Entry: Decodable {
                    var method: String
                    var url: String
                    var status: Int
                    var requestHeaders: [String: String]
                    var time: Double
                    var phases: Double
                    var hasContent: Bool
                }
                var pages: Int
                var entries: [Entry]
            }
            let harPath = file.path
            let output = try await offThePool {
                try PythonTools.run([Fixtures.folder.appendingPathComponent("read-har.py").path, harPath], input: Data())
            }
            let read = try JSONDecoder().decode(Read.self, from: output)
            #expect(read.pages == 1)
            #expect(read.entries.count == onTheWire)
            #expect(recorder.exchanges.count == onTheWire)
            #expect(read.entries.map(\.status) == [302, 200, 200, 200, 404])
            #expect(read.entries.map(\.method) == ["GET", "GET", "POST", "GET", "GET"])
            #expect(read.entries[0].url.hasSuffix("/faults/redirect-to/302/echo/moved"))
            #expect(read.entries[1].url.hasSuffix("/echo/moved"))
            for entry in read.entries {
                #expect(abs(entry.time - entry.phases) < 0.001, "\(entry.url): time \(entry.time) ≠ phases \(entry.phases)")
                #expect(entry.time > 0)
            }
            #expect(read.entries[0].requestHeaders["authorization"] == "<redacted>")
            #expect(read.entries[1].hasContent)
            // The loads: five, the second cached GET answered by memory.
            let outcomes = recorder.loads.map(\.outcome)
            #expect(outcomes.count == 5)
            #expect(outcomes[3] == .cache(tier: .memory, isStale: false))
            if case .failed(.httpStatus(404, _)) = outcomes[4] {} else { Issue.record("the 404 load is recorded as \(outcomes[4])") }
            // Bodies are cut to the limit, their whole size kept.
            let moved = recorder.exchanges[1]
            #expect(moved.responseBody.count == 64)
            #expect(moved.responseBodySize > 64)
        }
    }

    @Test("a recorder past its capacity drops the oldest records, counts them, and its HAR file says so")
    func capacity() async throws {
        try await withServer { transport, server in
            let recorder = LoadRecorder(capacity: 2)
            let engine = Engine(transport: transport, metrics: nil, recorder: recorder)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            for index in 0..<3 { _ = try await engine.perform(AdHocAPI(path: "/echo/\(index)")).get() }
            #expect(recorder.exchanges.map { $0.request.path } == ["/echo/1", "/echo/2"])
            #expect(recorder.droppedExchanges == 1 && recorder.droppedLoads == 1)
            let har = try JSONSerialization.jsonObject(with: try recorder.httpArchive()) as? [String: Any]
            let comment = (har?["log"] as? [String: Any])?["comment"] as? String
            #expect(comment?.contains("the 1 oldest were dropped") == true, "\(comment ?? "no comment")")
        }
    }

    @Test("an app's own load number past Int64 goes into the HAR file as it is")
    func loadNumberPastInt64() async throws {
        try await withServer { transport, server in
            let recorder = LoadRecorder()
            let engine = Engine(transport: transport, metrics: nil, recorder: recorder)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            _ = try await engine.perform(AdHocAPI(path: "/echo/numbered"), loadID: LoadID(rawValue: .max)).get()
            let har = try JSONSerialization.jsonObject(with: try recorder.httpArchive()) as? [String: Any]
            let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
            let runway = try #require(entries?.first?["_runway"] as? [String: Any])
            #expect((runway["loadID"] as? NSNumber)?.uint64Value == UInt64.max)
        }
    }
}
