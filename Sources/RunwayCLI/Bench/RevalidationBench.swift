import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayNIO

/// `runway bench --suite revalidation`: 100 reloads of an unchanged 50 KB list from the demo
/// server in a child process, without validators (every reload fetches the body) and with them
/// (``CachePolicy/followingServer(tiers:ceiling:)`` under the server's `no-cache`: every reload
/// asks, and a `304 Not Modified` answers). The bytes are what the server process wrote to its
/// sockets (`wchar` of `/proc/<pid>/io`), so headers count too.
enum RevalidationBench {
    struct ListAPI: API {
        var service: ServiceID { "bench" }
        var path: String { "/caching/doc/\(key)" }
        var method: HTTPRequest.Method { .get }
        var name: String { "RevalidationList" }
        var key: String
        var cachePolicy: CachePolicy
    }

    static let reloads = 100

    static func run(logger: Logger) async throws {
        let server = try ChildServer.start(demo: true)
        defer { server.stop() }
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio, cache: try ResponseCache(), logger: logger)
        try engine.register(Service(id: "bench", environment: .develop, baseURLs: [.develop: server.baseURL]))
        let params: Parameters = ["size": 50_000, "cc": "no-cache"]
        print("Revalidation: \(reloads) reloads of an unchanged list of about 50 KB (AsyncHTTPClient, server in a child process):")
        print("scenario".padding(toLength: 40, withPad: " ", startingAt: 0) + "bytes sent by the server   per reload   requests")
        var totals: [Int] = []
        for (name, policy) in [("without validators (no cache)", CachePolicy.none), ("with validators (ETag, 304)", .followingServer(tiers: .memory))] {
            let api = ListAPI(key: "bench-\(totals.count)", cachePolicy: policy)
            let before = writtenBytes(of: server.process.processIdentifier)
            var bodies = 0
            for _ in 0..<reloads {
                let response = try await engine.perform(api, params: params).get()
                bodies += response.body.count
            }
            let after = writtenBytes(of: server.process.processIdentifier)
            guard let before, let after else {
                print("\(name): /proc/<pid>/io is not readable here; delivered \(bodies) body bytes")
                continue
            }
            totals.append(after - before)
            print(
                name.padding(toLength: 40, withPad: " ", startingAt: 0)
                    + String(after - before).padding(toLength: 27, withPad: " ", startingAt: 0)
                    + String((after - before) / reloads).padding(toLength: 13, withPad: " ", startingAt: 0) + "\(reloads)")
        }
        if totals.count == 2, totals[1] > 0 {
            print(String(format: "validators save %.1f %% of the bytes (%.0f× fewer)\n", 100 * (1 - Double(totals[1]) / Double(totals[0])), Double(totals[0]) / Double(totals[1])))
        }
        try await nio.shutdown()
    }

    /// Bytes process `pid` has written (`wchar` of `/proc/<pid>/io`); `nil` where there is no
    /// such file.
    static func writtenBytes(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
