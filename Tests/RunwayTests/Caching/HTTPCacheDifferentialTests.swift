import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// Runway's cache (``CachePolicy/followingServer(tiers:ceiling:)``) against a cache nobody here
/// wrote: hishel, an RFC 9111 cache for httpx, runs the same scripted sequences against the
/// same httpbin. For each request, the two must agree on whether the server was asked, whether
/// the request was conditional (both read from gunicorn's access log), and which body was
/// delivered (the step whose answer it is: httpbin echoes each request's `X-Step`).
///
/// Where Runway differs on purpose, the scenario says how, and the test checks that it still
/// does; `README.md` ("Caching") has the same table.
@Suite("Response cache: differential against hishel (RFC 9111) over httpbin", .timeLimit(.minutes(10)))
struct HTTPCacheDifferentialTests {
    /// One scripted request, or time passing on both caches' clocks.
    enum Step {
        case get(String, headers: [String: String] = [:])
        case advance(TimeInterval)
        /// A request that steers the server, around both caches.
        case post(String)
    }

    /// What hishel delivered for one GET.
    struct Delivered: Decodable {
        var status: Int
        var body: String
    }

    /// What a client did at one request.
    struct Seen: Equatable, CustomStringConvertible {
        var asked: Bool
        var conditional: Bool
        /// The step whose server answer was delivered.
        var body: Int

        var description: String { "\(asked ? (conditional ? "asked, conditional" : "asked") : "not asked") · body of step \(body)" }
    }

    struct Scenario: Sendable {
        var name: String
        var steps: [Step]
        /// Runway's ceiling on freshness (the API's policy).
        var ceiling: Duration = .seconds(30 * 86_400)
        /// A deliberate difference: at these requests (indices among the GETs) Runway asks the
        /// server where hishel does not.
        var runwayAsksAt: [Int] = []
        /// Why Runway differs, for the table.
        var why: String?
    }

    static let httpDate: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// Lifetimes are minutes long and the clocks move by more: a fresh step stays fresh however
    /// slowly a busy machine runs the sequence (httpbin's `Date` is real time).
    static var scenarios: [Scenario] {
        let now = Date()
        let expires = encoded(httpDate.string(from: now.addingTimeInterval(600)))
        let modified = encoded(httpDate.string(from: now.addingTimeInterval(-10 * 86_400)))
        let vary1 = "/response-headers?Cache-Control=max-age%3D600&Vary=X-Variant"
        let vary2 = "/response-headers?Cache-Control=max-age%3D600&Vary=X-A%2C%20X-B"
        return [
            Scenario(name: "max-age fresh, then expired", steps: [.get("/cache/600"), .get("/cache/600"), .advance(1_200), .get("/cache/600")]),
            Scenario(name: "no-store", steps: [.get("/response-headers?Cache-Control=no-store"), .get("/response-headers?Cache-Control=no-store")]),
            Scenario(
                name: "no-cache: revalidated every time; a 200 after the validator mismatches",
                steps: [.get("/response-headers?Cache-Control=no-cache&ETag=%22n1%22"), .get("/response-headers?Cache-Control=no-cache&ETag=%22n1%22")]),
            Scenario(
                name: "must-revalidate",
                steps: [
                    .get("/response-headers?Cache-Control=max-age%3D600%2C%20must-revalidate&ETag=%22m1%22"),
                    .get("/response-headers?Cache-Control=max-age%3D600%2C%20must-revalidate&ETag=%22m1%22"), .advance(1_200),
                    .get("/response-headers?Cache-Control=max-age%3D600%2C%20must-revalidate&ETag=%22m1%22"),
                ]),
            Scenario(
                name: "Expires with Date",
                steps: [.get("/response-headers?Expires=\(expires)"), .get("/response-headers?Expires=\(expires)"), .advance(1_200), .get("/response-headers?Expires=\(expires)")]),
            Scenario(name: "Expires that is not a date", steps: [.get("/response-headers?Expires=0"), .get("/response-headers?Expires=0")]),
            Scenario(name: "ETag: a 304 delivers the stored body", steps: [.get("/etag/e1"), .advance(1), .get("/etag/e1"), .get("/etag/e1")]),
            Scenario(name: "Last-Modified: a 304 delivers the stored body", steps: [.get("/cache"), .get("/cache")]),
            Scenario(
                name: "Vary on one field",
                steps: [.get(vary1, headers: ["X-Variant": "a"]), .get(vary1, headers: ["X-Variant": "a"]), .get(vary1, headers: ["X-Variant": "b"])]),
            Scenario(
                name: "Vary: the first variant again",
                steps: [.get(vary1, headers: ["X-Variant": "c"]), .get(vary1, headers: ["X-Variant": "d"]), .get(vary1, headers: ["X-Variant": "c"])],
                runwayAsksAt: [2], why: "Runway keeps one variant per key (as OkHttp does); hishel keeps each"),
            Scenario(
                name: "Vary on two fields",
                steps: [
                    .get(vary2, headers: ["X-A": "1", "X-B": "1"]), .get(vary2, headers: ["X-A": "1", "X-B": "1"]),
                    .get(vary2, headers: ["X-A": "1", "X-B": "2"]),
                ]),
            Scenario(name: "Vary: *", steps: [.get("/response-headers?Cache-Control=max-age%3D600&Vary=%2A"), .get("/response-headers?Cache-Control=max-age%3D600&Vary=%2A")]),
            Scenario(
                name: "heuristic freshness: a tenth of the time since Last-Modified",
                steps: [
                    .get("/response-headers?Last-Modified=\(modified)"), .get("/response-headers?Last-Modified=\(modified)"), .advance(2 * 86_400),
                    .get("/response-headers?Last-Modified=\(modified)"),
                ]),
            Scenario(
                name: "Age counts against max-age", steps: [.get("/response-headers?Cache-Control=max-age%3D600&Age=1000"), .get("/response-headers?Cache-Control=max-age%3D600&Age=1000")],
                runwayAsksAt: [1],
                why: "RFC 9111 §4.2.3: an answer 1,000 s old with max-age=600 is stale on arrival; hishel 2.0.0 computes age from Date only"),
            Scenario(
                name: "the API's ceiling", steps: [.get("/cache/600"), .advance(45), .get("/cache/600")], ceiling: .seconds(30), runwayAsksAt: [1],
                why: "the API's policy is a ceiling on what the server allows (here 30 s under max-age=600)"),
            Scenario(
                name: "answers per credential",
                steps: [.get("/cache/600", headers: ["Authorization": "Bearer alice"]), .get("/cache/600", headers: ["Authorization": "Bearer bob"])],
                runwayAsksAt: [1],
                why: "a request with a credential is kept per user (CachePolicy.sensitiveComponent) or not at all; hishel's key is the URL"),
        ]
    }

    /// What the access log says of each X-Step: asked, and with which conditional fields.
    static func readLog(_ lines: [String]) -> [String: Bool] {
        var conditional: [String: Bool] = [:]
        for line in lines {
            let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { continue }
            conditional[parts[0]] = parts[1] != "-" || parts[2] != "-"
        }
        return conditional
    }

    /// The step whose answer `body` is: the X-Step httpbin echoed, else the first delivered
    /// body with the same bytes.
    static func origin(of body: String, index: Int, earlier: [String], tag: String) -> Int {
        if let data = body.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let headers = object["headers"] as? [String: Any], let step = headers["X-Step"] as? String,
            step.hasPrefix(tag), let number = Int(step.dropFirst(tag.count))
        {
            return number
        }
        return earlier.firstIndex(of: body) ?? index
    }

    /// Runs every scenario through Runway on `kind`.
    func runRunway(_ kind: TransportKind, base: String) async throws -> [String: [String]] {
        var results: [String: [String]] = [:]
        for scenario in Self.scenarios {
            let clock = TestBox(Date())
            let cache = try ResponseCache(now: { clock.value })
            let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
            let engine = Engine(transport: nio ?? URLSessionTransport(), cache: cache)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: base]))
            var delivered: [String] = []
            var index = 0
            for step in scenario.steps {
                switch step {
                case .advance(let seconds):
                    clock.set(clock.value.addingTimeInterval(seconds))
                case .post:
                    continue
                case .get(let target, let headers):
                    let (path, params) = Self.split(target)
                    var api = AdHocAPI(path: path, name: "Differential")
                    api.responseFormat = .raw
                    api.cachePolicy = .followingServer(tiers: .memory, ceiling: scenario.ceiling)
                    for (name, value) in headers { api.headers[HTTPField.Name(name)!] = value }
                    api.headers[HTTPField.Name("X-Step")!] = "runway-\(kind.rawValue)-\(scenario.name)-\(index)"
                    let response = try await engine.perform(api, params: params).get()
                    delivered.append(String(decoding: response.body, as: UTF8.self))
                    index += 1
                }
            }
            try? await nio?.shutdown()
            results[scenario.name] = delivered
        }
        return results
    }

    /// `/path?a=1&b=2` as a path and params (Runway builds the query from params).
    static func split(_ target: String) -> (String, Parameters) {
        guard let question = target.firstIndex(of: "?") else { return (target, [:]) }
        var params: Parameters = [:]
        for pair in target[target.index(after: question)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            params[parts[0]] = .string(parts.count > 1 ? parts[1] : "")
        }
        return (String(target[..<question]), params)
    }

    static func runHishel(_ list: [Scenario], base: String) throws -> [String: [Delivered]] {
        var scenarios: [[String: Any]] = []
        for scenario in list {
            var steps: [[String: Any]] = []
            var index = 0
            for step in scenario.steps {
                switch step {
                case .advance(let seconds): steps.append(["advance": seconds])
                case .post(let target): steps.append(["post": target])
                case .get(let target, let headers):
                    steps.append(["get": target, "headers": headers, "step": "hishel-\(scenario.name)-\(index)"])
                    index += 1
                }
            }
            scenarios.append(["name": scenario.name, "steps": steps])
        }
        let input = try JSONSerialization.data(withJSONObject: ["base": base, "scenarios": scenarios])
        let output = try PythonTools.run([Fixtures.folder.appendingPathComponent("hishel-differential.py").path], input: input)
        return try JSONDecoder().decode([String: [Delivered]].self, from: output)
    }

    /// Each GET of each scenario as a client saw it.
    static func seen(_ delivered: [String: [String]], tag: String, log: [String: Bool]) -> [String: [Seen]] {
        var result: [String: [Seen]] = [:]
        for scenario in scenarios {
            let bodies = delivered[scenario.name] ?? []
            let prefix = "\(tag)-\(scenario.name)-"
            result[scenario.name] = bodies.enumerated().map { index, body in
                let conditional = log["\(prefix)\(index)"]
                return Seen(
                    asked: conditional != nil, conditional: conditional ?? false,
                    body: origin(of: body, index: index, earlier: Array(bodies[..<index]), tag: prefix))
            }
        }
        return result
    }

    @Test("a 5xx under stale-if-error: Runway answers with the stale entry, hishel with the 5xx (RFC 5861)")
    func staleIfErrorDiffers() async throws {
        try #require(await offThePool { PythonTools.has("hishel") }, "hishel is missing: \(PythonTools.installHint)")
        // httpbin cannot answer one URL with a 200 and then a 5xx: the demo server's document can.
        try await withHarness { harness in
            func scenario(_ key: String) -> Scenario {
                Scenario(
                    name: key,
                    steps: [
                        .get("/caching/doc/\(key)?cc=max-age%3D10%2C%20stale-if-error%3D600"), .advance(20),
                        .post("/caching/doc/\(key)/fail?status=503"), .get("/caching/doc/\(key)?cc=max-age%3D10%2C%20stale-if-error%3D600"),
                    ])
            }
            let base = harness.server.baseURL
            let sieScenario = scenario("sie-hishel")
            let hishel = try await offThePool { try Self.runHishel([sieScenario], base: base)["sie-hishel"] ?? [] }
            #expect(hishel.map(\.status) == [200, 503], "hishel 2.0.0 does not act on stale-if-error")

            let clock = TestBox(Date())
            let cache = try ResponseCache(now: { clock.value })
            let engine = Engine(transport: URLSessionTransport(), cache: cache)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL]))
            var api = AdHocAPI(path: "/caching/doc/sie-runway", name: "Differential")
            api.cachePolicy = .followingServer(tiers: .memory)
            let params: Parameters = ["cc": "max-age=10, stale-if-error=600"]
            let first = try await engine.perform(api, params: params).get()
            clock.set(clock.value.addingTimeInterval(20))
            var steer = AdHocAPI(path: "/caching/doc/sie-runway/fail", method: .post, name: "Steer")
            steer.paramEncoding = .query
            _ = try await engine.perform(steer, params: ["status": 503]).get()
            let second = try await engine.perform(api, params: params).get()
            #expect(second.origin.isStale)
            #expect(second.body == first.body)
        }
    }

    @Test("Runway and hishel agree on every scripted sequence, except the deliberate differences", arguments: TransportKind.allCases)
    func differential(kind: TransportKind) async throws {
        try #require(await offThePool { PythonTools.has("hishel") }, "hishel is missing: \(PythonTools.installHint)")
        try await withHTTPBin(threads: 1, accessLogFormat: "%({x-step}i)s|%({if-none-match}i)s|%({if-modified-since}i)s") { httpbin in
            let log = try #require(httpbin.accessLog)
            let base = httpbin.baseURL
            // The driver runs off the pool: a slow interpreter must not stall the suite's tasks.
            let hishel = try await offThePool { try Self.runHishel(Self.scenarios, base: base).mapValues { $0.map(\.body) } }
            let runway = try await runRunway(kind, base: httpbin.baseURL)
            // The last request: every earlier one is in the log before it (one worker thread).
            let marker = "end-of-differential-\(kind.rawValue)"
            let engine = Engine(transport: URLSessionTransport())
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: httpbin.baseURL]))
            var last = AdHocAPI(path: "/status/204", name: "Marker")
            last.headers[HTTPField.Name("X-Step")!] = marker
            _ = try await engine.perform(last).get()
            let lines = Self.readLog(try await log.lines(through: marker))
            let theirs = Self.seen(hishel, tag: "hishel", log: lines)
            let ours = Self.seen(runway, tag: "runway-\(kind.rawValue)", log: lines)
            for scenario in Self.scenarios {
                let mine = ours[scenario.name] ?? []
                let expected = (theirs[scenario.name] ?? []).enumerated().map { index, seen in
                    guard scenario.runwayAsksAt.contains(index), index < mine.count else { return seen }
                    return Seen(asked: true, conditional: seen.conditional, body: mine[index].body)
                }
                #expect(ours[scenario.name] == expected, "\(scenario.name): Runway \(ours[scenario.name] ?? []) · hishel \(theirs[scenario.name] ?? [])")
                if !scenario.runwayAsksAt.isEmpty {
                    #expect(theirs[scenario.name] != ours[scenario.name], "\(scenario.name): no longer differs (\(scenario.why ?? ""))")
                }
            }
        }
    }
}
