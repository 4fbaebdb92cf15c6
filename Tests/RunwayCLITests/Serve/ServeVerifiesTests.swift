import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
@testable import Runway
import RunwayTestSupport
import Testing

/// `runway serve` as users deploy it: the collector and the listings verify signatures unless
/// told loudly not to, with the key printed at start.
@Suite("runway serve verifies by default", .timeLimit(.minutes(10)))
struct ServeVerifiesTests {
    /// Posts `body` (by default one gzip batch of one event) to `baseURL`'s collector, signed
    /// with `key` when given.
    static func post(
        to baseURL: String, signedWith key: (id: String, secret: SymmetricKey)?, body: Data? = nil
    ) async throws -> (Int, String?) {
        let body = try body ?? Gzip.compress(
            Data(#"{"events":[{"id":"\#(UUID().uuidString)","name":"tap","time":1700000000000,"payload":{}}]}"#.utf8))
        var head = HTTPRequest(
            method: .post, scheme: "http", authority: baseURL.replacingOccurrences(of: "http://", with: ""),
            path: "/oplog/batches")
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentEncoding] = "gzip"
        if let key {
            try HMACSigner(keyID: key.id, secret: key.secret).sign(
                &head, body: body, context: SigningContext(apiName: "raw", service: "oplog", attempt: 1))
        }
        var request = HTTPClientRequest(url: baseURL + "/oplog/batches")
        request.method = .POST
        for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSON(parsing: Data(buffer: bytes)))?["reason"]?.stringValue)
    }

    @Test("By default an unsigned batch is refused, one signed with the printed key is stored; --key-id/--secret choose it")
    func verifiesByDefault() async throws {
        let (process, baseURL, banner) = try await startServe([]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let line = try #require(banner.last)
        #expect(line.contains("key id runway-demo-2026"))
        let hex = try #require(line.components(separatedBy: "secret ").last?.split(separator: " ").first.map(String.init))
        let secret = SymmetricKey(data: try #require(RequestSignature.bytes(fromHex: hex)))
        let unsigned = try await Self.post(to: baseURL, signedWith: nil)
        #expect(unsigned.0 == 401 && unsigned.1 == "missing_header")
        #expect(try await Self.post(to: baseURL, signedWith: ("runway-demo-2026", secret)).0 == 200)

        let chosen = SymmetricKey(size: .bits256)
        let chosenHex = chosen.withUnsafeBytes { RequestSignature.hex($0) }
        let (own, ownURL, _) = try await startServe(["--key-id", "shop-ios", "--secret", chosenHex]) {
            $0.contains("Signatures verified")
        }
        defer { own.terminate() }
        #expect(try await Self.post(to: ownURL, signedWith: ("shop-ios", chosen)).0 == 200)
        #expect(try await Self.post(to: ownURL, signedWith: ("runway-demo-2026", secret)).1 == "unknown_key")
    }

    @Test("runway oplog soak and runway oplog stats reach a default runway serve: both sign with the demo key")
    func clientCommandsSignLikeServe() async throws {
        let (process, baseURL, _) = try await startServe([]) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let container = FileManager.default.temporaryDirectory.appendingPathComponent("runway-soak-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: container) }
        let soak = try await Self.run(["oplog", "soak", "--server", baseURL, "--container", container, "--count", "3"])
        #expect(soak.status == 0, "\(soak.output)")
        #expect(soak.output.split(separator: "\n").filter { $0.hasPrefix("committed ") }.count == 3)
        let stats = try await Self.run(["oplog", "stats", "--server", baseURL])
        #expect(stats.status == 0, "\(stats.output)")
        #expect(stats.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == ["events: 3", "soak.tick: 3"])
    }

    @Test("each run of a default runway serve collects into a new store, even when its process id is an earlier run's")
    func defaultStoreIsFresh() async throws {
        // Process 1 of a PID namespace of its own, twice: the same process id both times, and
        // the same temporary folder.
        let folder = try ScratchFolder("serve-runs")
        defer { folder.remove() }
        var stores: [String] = []
        for run in 0..<2 {
            let (process, baseURL, banner) = try await startServe(
                ["--no-verify"], inNewPIDNamespace: true, temporaryFolder: folder.url
            ) {
                $0.contains("WARNING")
            }
            // `unshare` blocks SIGTERM; killed, it takes `runway` with it (`--kill-child`).
            defer {
                _ = kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            let stats = try await Self.run(["oplog", "stats", "--server", baseURL])
            #expect(stats.output.split(separator: "\n").first == "events: 0", "run \(run): \(stats.output)")
            #expect(try await Self.post(to: baseURL, signedWith: nil).0 == 200)
            stores += banner.compactMap { $0.components(separatedBy: "events in ").dropFirst().first }
        }
        #expect(stores.count == 2 && Set(stores).count == 2, "\(stores)")
    }

    @Test("runway serve runs the collector alone: the fault and demo routes answer only with --demo")
    func demoRoutesOnlyWhenAsked() async throws {
        func status(_ url: String) async throws -> UInt {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 20)
            return response.status.code
        }
        let (collector, collectorURL, collectorBanner) = try await startServe(["--no-verify"]) { $0.contains("WARNING") }
        defer { collector.terminate() }
        #expect(collectorBanner.first?.hasPrefix("Runway collector at ") == true)
        #expect(try await status(collectorURL + "/health") == 200)
        #expect(try await status(collectorURL + "/oplog/stats") == 200)
        for path in ["/faults/flaky?key=a&failures=0", "/faults/status/503", "/echo/x", "/listings/zf", "/endpoints"] {
            #expect(try await status(collectorURL + path) == 404, "\(path)")
        }
        let (demo, demoURL, _) = try await startServe(["--no-verify", "--demo"]) { $0.contains("WARNING") }
        defer { demo.terminate() }
        #expect(try await status(demoURL + "/faults/status/503") == 503)
        #expect(try await status(demoURL + "/echo/x") == 200)
        #expect(try await status(demoURL + "/listings/zf") == 200)
    }

    /// Runs `runway` with `arguments` to its end: its exit status and standard output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let (process, reader) = try startNiced(arguments, niceness: 5)
        let data = try await offThePool {
            defer { process.waitUntilExit() }
            return try reader.readToEnd() ?? Data()
        }
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("--no-verify lets unsigned batches in, and says so")
    func noVerifyIsLoud() async throws {
        let (process, baseURL, banner) = try await startServe(["--no-verify"]) { $0.contains("WARNING") }
        defer { process.terminate() }
        #expect(banner.last?.contains("accept unsigned requests") == true)
        #expect(try await Self.post(to: baseURL, signedWith: nil).0 == 200)
    }
}
