import Foundation
import HTTPTypes
import NIOSSL
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The fault matrix: every fault a real network and real servers produce, loaded through an
/// engine over each transport, over real HTTP and TLS. A row states one outcome, and every
/// transport must reach it; what a platform cannot do is said once, in ``limits``, with why.
@Suite("Exchange conformance: the fault matrix on every transport", .timeLimit(.minutes(10)))
struct ExchangeConformanceTests {
    /// A fault, and how a load meets it.
    enum Fault: String, CaseIterable, CustomTestStringConvertible {
        case status503, challenged401, bare401, head, noContent204, resetContent205
        case slowDrip, stallAfterHead, headNeverComes, resetMidBody
        case overCapWithLength, overCapWithoutLength, gzip, deflate, unknownEncoding
        case rawDeflate, gzipCutShort, gzipOverCap
        case sameOriginRedirect, crossOriginRedirect, redirectNotFollowed, plainHTTPRefused, connectionRefused
        case untrustedCertificate, pinMismatch, cookiesNotKept, cancellationSeenByServer
        // The edges of HTTP (`ExchangeConformanceTests+Edges.swift`).
        case longSilence, largeHead, repeatedFields, twoCookies, tooManyRequestsWithDate, redirectWithoutLocation
        case informational1xx
        // HTTP/2 over TLS, negotiated by ALPN.
        case http2Answer, http2ResetMidBody, http2Gzip

        var testDescription: String { rawValue }

        /// What every transport must end the load as.
        var expected: Outcome {
            switch self {
            case .status503: .failure("httpStatus(503)")
            case .challenged401, .bare401: .failure("httpStatus(401)")
            case .head: .answer(status: 200, detail: "0 bytes, X-Resource-Version 7")
            case .noContent204: .answer(status: 204, detail: "0 bytes")
            case .resetContent205: .answer(status: 205, detail: "0 bytes")
            case .slowDrip, .stallAfterHead, .headNeverComes: .failure("timeout")
            case .resetMidBody: .failure("connectionLost")
            case .overCapWithLength, .overCapWithoutLength, .gzipOverCap: .failure("invalidResponse(too large)")
            case .gzipCutShort: .failure("invalidResponse(undecodable)")
            case .gzip, .deflate, .rawDeflate:
                .answer(status: 200, detail: "the whole body, 200 items, no Content-Encoding")
            case .unknownEncoding: .failure("invalidResponse(content coding)")
            case .sameOriginRedirect: .answer(status: 200, detail: "/echo/landed")
            case .crossOriginRedirect: .failure("redirectRefused")
            case .redirectNotFollowed: .failure("httpStatus(302)")
            case .plainHTTPRefused: .failure("insecureConnection")
            case .connectionRefused: .failure("noNetwork(connectionRefused)")
            case .untrustedCertificate: .failure("tlsFailure")
            case .pinMismatch: .failure("pinningFailed")
            case .cookiesNotKept: .answer(status: 200, detail: "no Cookie")
            case .cancellationSeenByServer: .failure("cancelled")
            case .longSilence: .answer(status: 200, detail: "after the silence")
            case .largeHead: .answer(status: 200, detail: "0 bytes, Content-Length 41943040")
            case .repeatedFields: .answer(status: 200, detail: "X-Tag [one] [two]")
            case .twoCookies: .answer(status: 200, detail: "Cookie: first=1; second=2")
            case .tooManyRequestsWithDate: .failure("httpStatus(429)")
            case .redirectWithoutLocation: .failure("httpStatus(302)")
            case .informational1xx: .answer(status: 200, detail: "2 bytes")
            case .http2Answer: .answer(status: 200, detail: "HTTP/2")
            case .http2ResetMidBody: .failure("connectionLost")
            case .http2Gzip: .answer(status: 200, detail: "the whole body, 200 items, no Content-Encoding, HTTP/2")
            }
        }
    }

    /// What a load ended as, in the terms every transport must agree on: an answer's status and
    /// what the row looks at, or the error's case (with the status for an HTTP status).
    enum Outcome: Equatable, CustomStringConvertible {
        case answer(status: Int, detail: String)
        case failure(String)

        init(_ result: Result<RawResponse, RunwayError>, detail: (RawResponse) -> String = { "\($0.body.count) bytes" }) {
            switch result {
            case .success(let response): self = .answer(status: response.status.code, detail: detail(response))
            case .failure(let error): self = .failure(Self.name(of: error))
            }
        }

        static func name(of error: RunwayError) -> String {
            switch error {
            case .httpStatus(let code, _): "httpStatus(\(code))"
            case .noNetwork(let reason): "noNetwork(\(reason))"
            // Its description is all there is to compare; no row expects one.
            case .transport(let description): "transport(\(description))"
            // Two rows end as an invalid response for different reasons: which one, by its words.
            case .invalidResponse(let reason) where reason.contains("larger than allowed"): "invalidResponse(too large)"
            case .invalidResponse(let reason) where reason.contains("content coding"): "invalidResponse(content coding)"
            case .invalidResponse(let reason) where reason.contains("cannot be decoded"): "invalidResponse(undecodable)"
            default: String(error.messageKey.dropFirst("error.".count))
            }
        }

        var description: String {
            switch self {
            case .answer(let status, let detail): "answer \(status): \(detail)"
            case .failure(let name): "failure \(name)"
            }
        }
    }

    /// Where a platform's transport cannot reach a row's outcome: the one place that says so,
    /// with the outcome it reaches instead and why.
    static let limits: [TransportKind: [Fault: (outcome: Outcome, why: String)]] = {
        #if canImport(Security)
        return [:]
        #else
        let noTestRoots = (
            Outcome.failure("tlsFailure"),
            "swift-corelibs-foundation raises no server-trust challenge, so URLSession on Linux trusts the system's "
                + "roots only and cannot reach a server whose certificate was made at test time"
        )
        return [
            .urlSession: [
                .repeatedFields: (
                    .answer(status: 200, detail: "X-Tag [one, two]"),
                    "HTTPURLResponse gives its fields as a dictionary (allHeaderFields), repeated fields joined by a "
                        + "comma, on every platform: the same value by RFC 9110 §5.3 for a list field, and the "
                        + "transport cannot tell them apart again (Set-Cookie, which a comma cannot join, is split "
                        + "back by the cookie jar)"
                ),
                .http2Answer: noTestRoots, .http2ResetMidBody: noTestRoots, .http2Gzip: noTestRoots,
                .pinMismatch: (
                    .failure("invalidRequest"),
                    "swift-corelibs-foundation raises no server-trust challenge, so URLSession on Linux cannot see the "
                        + "server's key; Engine.register refuses a pinned service instead of sending unchecked"
                ),
                .gzipCutShort: (
                    .answer(status: 200, detail: "part of the body"),
                    "URLSession undoes gzip itself (it cannot be told not to) and on Linux libcurl 7.88 hands on what "
                        + "it inflated without checking gzip's trailer, so the engine never sees the stream end early; "
                        + "a JSON API still fails to parse the part"
                ),
            ]
        ]
        #endif
    }()

    @Test("every transport ends each fault the same way", arguments: TransportKind.allCases, Fault.allCases)
    func fault(_ kind: TransportKind, _ fault: Fault) async throws {
        let outcome = try await Self.load(fault, on: kind)
        let expected = Self.limits[kind]?[fault]?.outcome ?? fault.expected
        #expect(outcome == expected, "\(fault) on \(kind)")
    }

    /// Loads what meets `fault` through an engine over a new transport of `kind`, and checks
    /// what the server saw where the row is about it.
    static func load(_ fault: Fault, on kind: TransportKind) async throws -> Outcome {
        switch fault {
        case .untrustedCertificate, .pinMismatch, .http2Answer, .http2ResetMidBody, .http2Gzip:
            return try await overTLS(fault, on: kind)
        case .informational1xx:
            return try await informational(on: kind)
        default:
            return try await withHarness(kind) { harness in try await load(fault, harness) }
        }
    }

    static func load(_ fault: Fault, _ harness: Harness) async throws -> Outcome {
        let engine = harness.engine
        func perform(_ api: AdHocAPI, _ params: Parameters = [:]) async -> Result<RawResponse, RunwayError> {
            await engine.perform(api, params: params)
        }
        var raw = AdHocAPI(path: "/")
        raw.responseFormat = .raw
        switch fault {
        case .status503:
            return Outcome(await perform(AdHocAPI(path: "/faults/status/503")))
        case .challenged401:
            // The default deadline, which no machine reaches: a transport that waited on the
            // challenge instead of landing it would fail by its timeout, not pass slowly.
            return Outcome(await perform(AdHocAPI(path: "/faults/challenge"), ["scheme": "Basic"]))
        case .bare401:
            return Outcome(await perform(AdHocAPI(path: "/faults/status/401")))
        case .head:
            raw.path = "/faults/no-content"
            raw.method = .head
            return Outcome(await perform(raw)) { response in
                "\(response.body.count) bytes, X-Resource-Version \(response.response.headerFields[HTTPField.Name("X-Resource-Version")!] ?? "none")"
            }
        case .noContent204:
            raw.path = "/faults/no-content"
            raw.method = .delete
            return Outcome(await perform(raw))
        case .resetContent205:
            raw.path = "/faults/reset-content"
            raw.method = .put
            return Outcome(await perform(raw))
        case .slowDrip:
            // 60 bytes, one every 100 ms: six seconds of body against a one-second timeout.
            return Outcome(await perform(AdHocAPI(path: "/faults/drip", timeout: .seconds(1)), ["chunks": 60, "interval_ms": 100]))
        case .stallAfterHead:
            let outcome = Outcome(await perform(AdHocAPI(path: "/faults/stall", timeout: .seconds(1))))
            await harness.probe.waitForClose(ifSeen: "/faults/stall")
            return outcome
        case .headNeverComes:
            let outcome = Outcome(await perform(AdHocAPI(path: "/faults/hang", timeout: .seconds(1))))
            await harness.probe.waitForClose(ifSeen: "/faults/hang")
            return outcome
        case .resetMidBody:
            return Outcome(await perform(AdHocAPI(path: "/faults/drop"), ["key": "matrix", "failures": 1]))
        case .overCapWithLength:
            raw.path = "/faults/encoded"
            raw.maximumResponseSize = 1000
            return Outcome(await perform(raw, ["as": "identity"]))
        case .overCapWithoutLength:
            raw.path = "/faults/chunked"
            raw.maximumResponseSize = 50_000
            let outcome = Outcome(await perform(raw, ["bytes": 60_000]))
            raw.maximumResponseSize = 60_000
            let whole = Outcome(await perform(raw, ["bytes": 60_000]))
            #expect(whole == .answer(status: 200, detail: "60000 bytes"), "the same body within the limit")
            return outcome
        case .gzipOverCap:
            // About 1 KB on the wire, 13 KB once inflated: the cap counts what the app would hold.
            raw.path = "/faults/encoded"
            raw.maximumResponseSize = 5000
            return Outcome(await perform(raw, ["as": "gzip"]))
        case .gzipCutShort:
            raw.path = "/faults/encoded"
            return Outcome(await perform(raw, ["as": "gzip-cut"])) { response in
                let length = response.response.headerFields[HTTPField.Name("X-Uncompressed-Length")!]
                return length == String(response.body.count) ? "the whole body" : "part of the body"
            }
        case .gzip, .deflate, .rawDeflate:
            var api = AdHocAPI(path: "/faults/encoded")
            api.headers[.acceptEncoding] = "gzip, deflate"
            let coding = fault == .rawDeflate ? "raw-deflate" : fault.rawValue
            return Outcome(await perform(api, ["as": .string(coding)])) { response in
                let items = response.json?["items"]?.arrayValue?.count ?? 0
                let encoding = response.response.headerFields[.contentEncoding].map { "Content-Encoding \($0)" }
                let length = response.response.headerFields[HTTPField.Name("X-Uncompressed-Length")!]
                let whole = length == String(response.body.count) ? "the whole body" : "\(response.body.count) bytes"
                return "\(whole), \(items) items, \(encoding ?? "no Content-Encoding")"
            }
        case .unknownEncoding:
            return Outcome(await perform(AdHocAPI(path: "/faults/encoded"), ["as": "x-runway"]))
        case .sameOriginRedirect:
            return Outcome(await perform(AdHocAPI(path: "/faults/redirect"), ["to": "/echo/landed"])) { response in
                response.json?["path"]?.stringValue ?? "no echo"
            }
        case .crossOriginRedirect:
            let nothingListens = try LoopbackSocket()
            defer { nothingListens.close() }
            let outcome = Outcome(
                await perform(AdHocAPI(path: "/faults/redirect"), ["to": .string("http://127.0.0.1:\(nothingListens.port)/echo/other")]))
            #expect(harness.probe.count("/echo") == 0)
            return outcome
        case .redirectNotFollowed:
            var api = AdHocAPI(path: "/faults/redirect")
            api.redirectPolicy = .never
            let outcome = Outcome(await perform(api, ["to": "/echo/after"]))
            #expect(harness.probe.count("/echo") == 0)
            return outcome
        case .plainHTTPRefused:
            try engine.register(Service(id: "plain", baseURLs: [.release: "http://api.runway.invalid"]))
            var api = AdHocAPI(path: "/echo/plain")
            api.service = "plain"
            return Outcome(await perform(api))
        case .connectionRefused:
            let nothingListens = try LoopbackSocket()
            defer { nothingListens.close() }
            try engine.register(Service(id: "refusing", baseURLs: [.release: "http://127.0.0.1:\(nothingListens.port)"]))
            var api = AdHocAPI(path: "/echo/refused")
            api.service = "refusing"
            return Outcome(await perform(api))
        case .cookiesNotKept:
            _ = try await perform(AdHocAPI(path: "/faults/set-cookie")).get()
            return Outcome(await perform(AdHocAPI(path: "/echo/after-cookie"))) { response in
                response.json?["headers"]?["cookie"]?.stringValue.map { "Cookie: \($0)" } ?? "no Cookie"
            }
        case .cancellationSeenByServer:
            let load = Task { await perform(AdHocAPI(path: "/faults/hang")) }
            await harness.probe.wait(for: .holdStarted)
            load.cancel()
            let outcome = Outcome(await load.value)
            await harness.probe.wait(for: .holdClosed)
            return outcome
        case .longSilence, .largeHead, .repeatedFields, .twoCookies, .tooManyRequestsWithDate, .redirectWithoutLocation:
            return try await edge(fault, harness)
        case .untrustedCertificate, .pinMismatch, .informational1xx, .http2Answer, .http2ResetMidBody, .http2Gzip:
            return .failure("not a row for the demo server over plain HTTP")
        }
    }

    /// The TLS rows: a server with a certificate made now. Untrusted: the transport trusts the
    /// system's roots only. Pin mismatch: the transport trusts the server's authority, and the
    /// service pins a key the server does not have.
    static func overTLS(_ fault: Fault, on kind: TransportKind) async throws -> Outcome {
        let authority = try TestCertificateAuthority()
        let server = try await DemoServer.start(tls: try authority.serverIdentity())
        var tls = TLSConfiguration.makeClientConfiguration()
        if fault != .untrustedCertificate { tls.trustRoots = .certificates([try authority.rootCertificate()]) }
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls)) : nil
        let engine = Engine(transport: nio ?? URLSessionTransport(), recorder: LoadRecorder())
        return try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let pins = fault == .pinMismatch ? [PublicKeyPins(host: "127.0.0.1", primary: PublicKeyPins.pin(ofSPKI: Array("not the server's key".utf8)), backups: [])] : []
            do throws(RunwayError) {
                try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL], connection: .init(pins: pins)))
            } catch {
                return .failure(Outcome.name(of: error))
            }
            if let outcome = try await http2(fault, engine: engine, server: server) { return outcome }
            let outcome = Outcome(await engine.perform(AdHocAPI(path: "/echo/tls")))
            #expect(server.probe.count("/echo") == 0, "nothing reaches a server the client does not trust")
            return outcome
        }
    }
}
