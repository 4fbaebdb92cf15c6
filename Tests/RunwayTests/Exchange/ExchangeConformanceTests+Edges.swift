import Foundation
import HTTPTypes
import NIOSSL
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The rows at the edges of HTTP: what a correct server may send that clients tend to get wrong
/// (a long silence before the head, HEAD of a large file, repeated fields, a 429 with a date, a
/// 3xx with nowhere to go, an informational answer first), and HTTP/2.
extension ExchangeConformanceTests {
    static func edge(_ fault: Fault, _ harness: Harness) async throws -> Outcome {
        let engine = harness.engine
        var raw = AdHocAPI(path: "/")
        raw.responseFormat = .raw
        switch fault {
        case .longSilence:
            // Longer than AsyncHTTPClient's 30-second read timeout, well within the API's own
            // two minutes: only the API's deadline may end it.
            let api = AdHocAPI(path: "/edges/late", timeout: .seconds(120))
            return Outcome(await engine.perform(api, params: ["seconds": 31])) { _ in "after the silence" }
        case .largeHead:
            raw.path = "/faults/large-head"
            raw.method = .head
            raw.maximumResponseSize = 1000
            return Outcome(await engine.perform(raw, params: [:])) { response in
                "\(response.body.count) bytes, Content-Length \(response.response.headerFields[.contentLength] ?? "none")"
            }
        case .repeatedFields:
            raw.path = "/edges/repeated"
            return Outcome(await engine.perform(raw, params: [:])) { response in
                "X-Tag " + response.response.headerFields[values: HTTPField.Name("X-Tag")!].map { "[\($0)]" }.joined(separator: " ")
            }
        case .twoCookies:
            try engine.register(
                Service(
                    id: "cookies", environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(cookies: CookieJar())))
            var set = AdHocAPI(path: "/edges/repeated")
            set.service = "cookies"
            _ = try await engine.perform(set, params: [:]).get()
            var echo = AdHocAPI(path: "/echo/after-cookies")
            echo.service = "cookies"
            return Outcome(await engine.perform(echo, params: [:])) { response in
                response.json?["headers"]?["cookie"]?.stringValue.map { "Cookie: \($0)" } ?? "no Cookie"
            }
        case .tooManyRequestsWithDate:
            // The flaky route answers 429 once, with the wait as an HTTP date two seconds on.
            let api = AdHocAPI(
                path: "/faults/flaky", retryPolicy: RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1), jitter: 0))
            let params: Parameters = [
                "key": "retry-at", "failures": 1, "status": 429, "retry_after": .string(imfFixdate(Date().addingTimeInterval(2))),
            ]
            let outcome = Outcome(await engine.perform(api, params: params))
            #expect(harness.probe.count("/faults/flaky/retry-at") == 1, "a 429 is delivered with its wait, not retried")
            return outcome
        case .redirectWithoutLocation:
            let outcome = Outcome(await engine.perform(AdHocAPI(path: "/edges/no-location"), params: [:]))
            #expect(harness.probe.count("/edges/no-location") == 1)
            return outcome
        default:
            return .failure("not an edge row")
        }
    }

    /// An informational answer (103 Early Hints) before the final one: the final answer is the
    /// load's. No server library here sends one, so a loopback server writes the bytes itself.
    static func informational(on kind: TransportKind) async throws -> Outcome {
        let hints =
            "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        let server = try await RawHTTPServer.start { _ in .init(hints) }
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let engine = Engine(transport: nio ?? URLSessionTransport())
        return try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            var raw = AdHocAPI(path: "/early-hints")
            raw.responseFormat = .raw
            return Outcome(await engine.perform(raw, params: [:]))
        }
    }

    /// The HTTP/2 rows, once the engine trusts the server (`nil` for the other TLS rows): the
    /// version is read from the engine's record of the exchange.
    static func http2(_ fault: Fault, engine: Engine, server: DemoServer) async throws -> Outcome? {
        func version() -> String { engine.recorder?.exchanges.last?.httpVersion ?? "no record" }
        switch fault {
        case .http2Answer:
            return Outcome(await engine.perform(AdHocAPI(path: "/echo/h2"), params: [:])) { _ in version() }
        case .http2ResetMidBody:
            return Outcome(await engine.perform(AdHocAPI(path: "/faults/drop"), params: ["key": "h2", "failures": 1]))
        case .http2Gzip:
            var api = AdHocAPI(path: "/faults/encoded")
            api.headers[.acceptEncoding] = "gzip"
            return Outcome(await engine.perform(api, params: ["as": "gzip"])) { response in
                let items = response.json?["items"]?.arrayValue?.count ?? 0
                let encoding = response.response.headerFields[.contentEncoding].map { "Content-Encoding \($0)" }
                let length = response.response.headerFields[HTTPField.Name("X-Uncompressed-Length")!]
                let whole = length == String(response.body.count) ? "the whole body" : "\(response.body.count) bytes"
                return "\(whole), \(items) items, \(encoding ?? "no Content-Encoding"), \(version())"
            }
        default:
            return nil
        }
    }
}

/// The rows whose outcome the engine alone decides, over `StubTransport`: the stub hands the
/// engine the demo server's real answer, whole (fetched without decoding by a plain
/// AsyncHTTPClient transport), so the engine's own steps — status, size cap, content coding,
/// framing of bodiless answers, redirects — must reach the outcome every transport reaches.
@Suite("Exchange conformance: the engine's own rows over StubTransport", .timeLimit(.minutes(10)))
struct StubConformanceTests {
    static let engineAlone: [ExchangeConformanceTests.Fault] = [
        .status503, .bare401, .head, .noContent204, .overCapWithLength, .overCapWithoutLength, .gzip, .deflate,
        .rawDeflate, .unknownEncoding, .gzipCutShort, .gzipOverCap, .sameOriginRedirect, .crossOriginRedirect,
        .redirectNotFollowed, .largeHead, .repeatedFields, .twoCookies, .tooManyRequestsWithDate,
        .redirectWithoutLocation,
    ]

    @Test("the engine reaches each row's outcome over a stub that replays the server's answer", arguments: engineAlone)
    func row(_ fault: ExchangeConformanceTests.Fault) async throws {
        let server = try await DemoServer.start()
        let wire = AsyncHTTPClientTransport()
        let stub = StubTransport { request in
            // The answer gathered whole, as a stub's canned one is: the engine decodes it.
            var plain = request
            plain.responseSink = nil
            plain.cancellation = nil
            return try await wire.send(plain)
        }
        try await withCleanup({
            try? await wire.shutdown()
            await server.stop()
        }) {
            let harness = Harness(server: server, engine: Engine(transport: stub))
            try harness.registerServices()
            let outcome = try await ExchangeConformanceTests.load(fault, harness)
            #expect(outcome == fault.expected, "\(fault) over StubTransport")
        }
    }
}
