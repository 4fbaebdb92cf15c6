import Crypto
import Foundation
import HTTPTypes
import NIOSSL
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The engine owns redirects: transports hand every 3xx back, and each hop is checked against
/// the rules of the first request.
@Suite("Redirects, hop by hop", .timeLimit(.minutes(10)))
struct RedirectTests {
    /// The params of `/faults/redirect`: where to, with which status.
    func redirect(to target: String, status: Int = 302) -> Parameters {
        ["to": .string(target), "status": .int(status)]
    }

    /// The redirect route, answering with `status` and `Location: target`.
    func redirecting(method: HTTPRequest.Method = .get) -> AdHocAPI {
        AdHocAPI(path: "/faults/redirect", method: method, paramEncoding: .query)
    }

    @Test("a same-origin redirect is followed and the answer says which URL answered", arguments: TransportKind.allCases)
    func sameOrigin(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let api = redirecting()
            let params = redirect(to: "/echo/after?x=1")
            let response = try await harness.engine.perform(api, params: params).get()
            #expect(response.json?["path"] == "/echo/after")
            #expect(response.json?["query"] == "x=1")
            #expect(response.url?.path == "/echo/after")
            #expect(harness.probe.count("/faults/redirect") == 1)
            #expect(harness.probe.count("/echo") == 1)
            #expect(harness.log.lines.contains { $0.message.contains("/echo/after?x=1") }, "the log names the final URL")
        }
    }

    @Test("the redirect policy .never lands the 3xx itself", arguments: TransportKind.allCases)
    func never(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var api = redirecting()
            let params = redirect(to: "/echo/after")
            api.redirectPolicy = .never
            let result = await harness.engine.perform(api, params: params)
            guard case .failure(.httpStatus(302, _)) = result else {
                Issue.record("expected the 302 itself, got \(result)")
                return
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("303 turns a POST into a GET without its body; 307 keeps both", arguments: TransportKind.allCases)
    func methodRules(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let see = AdHocAPI(path: "/faults/redirect-to/303/echo/303", method: .post)
            let seeOther = try await harness.engine.perform(see, params: ["k": "v"]).get()
            #expect(seeOther.json?["method"] == "GET")
            #expect(seeOther.json?["body"] == "")
            let temporary = AdHocAPI(path: "/faults/redirect-to/307/echo/307", method: .post)
            let kept = try await harness.engine.perform(temporary, params: ["k": "v"]).get()
            #expect(kept.json?["method"] == "POST")
            #expect(kept.json?["body"] == #"{"k":"v"}"#)
        }
    }

    @Test("a redirect to another origin is refused by default; the other host sees nothing", arguments: TransportKind.allCases)
    func crossOriginRefused(_ kind: TransportKind) async throws {
        let other = try await DemoServer.start()
        try await withCleanup({ await other.stop() }) {
            try await withHarness(kind) { harness in
                let api = redirecting()
            let params = redirect(to: "\(other.baseURL)/echo/stolen")
                let result = await harness.engine.perform(api, params: params)
                guard case .failure(.redirectRefused(let location, _)) = result else {
                    Issue.record("expected a refused redirect, got \(result)")
                    return
                }
                #expect(location.hasPrefix(other.baseURL))
                #expect(other.probe.count("/echo") == 0)
            }
        }
    }

    @Test("an opted-in cross-origin hop carries only what is asked for: no signature, no common header fields, no credential under any name", arguments: TransportKind.allCases)
    func crossOriginWithoutCredentials(_ kind: TransportKind) async throws {
        let other = try await DemoServer.start()
        try await withCleanup({ await other.stop() }) {
            try await withHarness(kind) { harness in
                var common = HTTPFields()
                common[HTTPField.Name("X-Api-Key")!] = "service-key"
                common[.cookie] = "session=abc"
                try harness.engine.register(
                    Service(
                        id: .test,
                        environment: .develop,
                        baseURLs: [.develop: harness.server.baseURL],
                        commonHeaders: common,
                        credentials: .init(signer: HMACSigner(keyID: "k", secret: SymmetricKey(size: .bits256)))))
                var api = redirecting()
            let params = redirect(to: "\(other.baseURL)/echo/cdn")
                api.redirectPolicy = .crossOriginWithoutCredentials
                api.headers[.authorization] = "Bearer user-token"
                // A key the API itself sends, under a name no denylist would know.
                api.headers[HTTPField.Name("X-Partner-Token")!] = "partner-secret"
                api.headers[.acceptLanguage] = "zh-Hant"
                let response = try await harness.engine.perform(api, params: params).get()
                let headers = try #require(response.json?["headers"])
                #expect(headers["accept-language"] == "zh-Hant", "what describes the representation asked for travels")
                for name in ["x-api-key", "x-partner-token", "cookie", "authorization", "x-runway-signature", "x-runway-key-id"] {
                    #expect(headers[name] == nil, "\(name) must not cross origins")
                }
                #expect(response.url?.absoluteString.hasPrefix(other.baseURL) == true)
                #expect(other.probe.count("/echo") == 1)
            }
        }
    }

    @Test("a redirect to plain HTTP off loopback is refused before any connection", arguments: TransportKind.allCases)
    func plainHTTPOffLoopback(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var api = redirecting()
            let params = redirect(to: "http://runway.invalid/steal")
            api.redirectPolicy = .crossOriginWithoutCredentials
            let result = await harness.engine.perform(api, params: params)
            #expect(throws: RunwayError.insecureConnection(host: "runway.invalid")) { try result.get() }
        }
    }

    @Test("a hop loop stops at the policy's limit", arguments: TransportKind.allCases)
    func hopLimit(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var api = redirecting()
            let params: Parameters = ["to": "self"]
            api.redirectPolicy = RedirectPolicy(maximumHops: 3)
            let result = await harness.engine.perform(api, params: params)
            guard case .failure(.redirectRefused(_, let reason)) = result else {
                Issue.record("expected the hop limit, got \(result)")
                return
            }
            #expect(reason.contains("more than 3"))
            #expect(harness.probe.count("/faults/redirect") == 4)
        }
    }

    @Test("a same-origin hop is signed again, so a verifier admits it", arguments: TransportKind.allCases)
    func sameOriginResigned(_ kind: TransportKind) async throws {
        let secret = SymmetricKey(size: .bits256)
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["k": [secret]]))
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let engine = Engine(transport: nio ?? URLSessionTransport())
        try engine.register(
            Service(
                id: .test,
                environment: .develop,
                baseURLs: [.develop: server.baseURL],
                credentials: .init(signer: HMACSigner(keyID: "k", secret: secret))))
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let api = redirecting()
            let params = redirect(to: "/signed/echo/moved?page=2")
            let response = try await engine.perform(api, params: params).get()
            #expect(response.json?["path"] == "/signed/echo/moved")
            #expect(response.request.headerFields[RequestSignature.Field.signature] != nil)
        }
    }

    /// Over AsyncHTTPClient's transport only: URLSession on Linux trusts the system's roots alone
    /// and cannot reach a server whose certificate was made at test time (the conformance
    /// matrix's limits say so); the rule itself is the engine's, the same for every transport
    /// (``RedirectStepTests``).
    @Test("an HTTPS → HTTP hop is refused even to loopback")
    func downgrade() async throws {
        let authority = try TestCertificateAuthority()
        let secure = try await DemoServer.start(tls: try authority.serverIdentity())
        let plain = try await DemoServer.start()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        let engine = Engine(transport: transport)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: secure.baseURL]))
        try await withCleanup({
            try? await transport.shutdown()
            await secure.stop()
            await plain.stop()
        }) {
            var api = redirecting()
            let params = redirect(to: "\(plain.baseURL)/echo/downgraded")
            api.redirectPolicy = .crossOriginWithoutCredentials
            let result = await engine.perform(api, params: params)
            #expect(throws: RunwayError.insecureConnection(host: "127.0.0.1")) { try result.get() }
            #expect(secure.probe.count("/faults/redirect") == 1)
            #expect(plain.probe.count("/echo") == 0)
        }
    }

    /// Over AsyncHTTPClient's transport only, for the same reason as ``downgrade()``; and Linux's
    /// URLSession checks no pins at all (`Engine.register` refuses a pinned service on it).
    @Test("a hop onto a host another service pins is checked against that host's pins")
    func pinsPerHop() async throws {
        let authority = try TestCertificateAuthority()
        let first = try await DemoServer.start(tls: try authority.serverIdentity())
        let pinned = try await DemoServer.start(tls: try authority.serverIdentity())
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        let wrongPin = PublicKeyPins.pin(ofSPKI: Array("not the server's key".utf8))
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        let engine = Engine(transport: transport)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: first.baseURL]))
        try engine.register(
            Service(
                id: "pinned",
                baseURLs: [.release: "https://localhost:\(pinned.port)"],
                connection: .init(pins: [PublicKeyPins(host: "localhost", primary: wrongPin, backups: [])])))
        try await withCleanup({
            try? await transport.shutdown()
            await first.stop()
            await pinned.stop()
        }) {
            var api = redirecting()
            let params = redirect(to: "https://localhost:\(pinned.port)/echo/pinned")
            api.redirectPolicy = .crossOriginWithoutCredentials
            let result = await engine.perform(api, params: params)
            #expect(throws: RunwayError.pinningFailed(host: "localhost")) { try result.get() }
            #expect(pinned.probe.count("/echo") == 0)
        }
    }

    @Test("a cached answer reached through a redirect remembers the URL that answered", arguments: TransportKind.allCases)
    func cachedUnderFinalURL(_ kind: TransportKind) async throws {
        let cache = try ResponseCache()
        try await withHarness(kind, cache: cache) { harness in
            var api = redirecting()
            let params = redirect(to: "/echo/cached-final")
            api.cachePolicy = .memory()
            let network = try await harness.engine.perform(api, params: params).get()
            let hit = try await harness.engine.perform(api, params: params).get()
            guard case .cache = hit.origin else {
                Issue.record("the second load must come from the cache")
                return
            }
            #expect(network.url?.path == "/echo/cached-final")
            #expect(hit.url?.path == "/echo/cached-final")
            #expect(harness.probe.count("/echo") == 1)
        }
    }
}

/// The redirect rules as a value, without I/O.
@Suite("RedirectStep", .timeLimit(.minutes(10)))
struct RedirectStepTests {
    let origin = RedirectStep.Origin(scheme: "https", authority: "api.example.com")
    func request(_ url: String, _ method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: url)!)
    }

    func decide(
        _ status: Int, _ location: String?, from url: String = "https://api.example.com/a", method: HTTPRequest.Method = .get,
        hops: Int = 0, policy: RedirectPolicy = .default, insecure: Bool = false
    ) -> RedirectStep {
        RedirectStep.decide(
            status: status, location: location, request: request(url, method), hopsSoFar: hops, policy: policy, origin: origin,
            allowsInsecureHTTP: insecure)
    }

    @Test("non-redirect statuses and missing locations land")
    func lands() {
        #expect(decide(200, "/x") == .land)
        #expect(decide(304, "/x") == .land)
        #expect(decide(302, nil) == .land)
        #expect(decide(302, "/x", policy: .never) == .land)
    }

    @Test("relative, absolute and default-port locations within the origin are same-origin")
    func sameOrigin() {
        guard case .follow(let hop) = decide(302, "/b?q=1") else { Issue.record("must follow"); return }
        #expect(hop.isSameOrigin && hop.path == "/b?q=1" && hop.authority == "api.example.com")
        guard case .follow(let explicit) = decide(301, "https://API.example.com:443/c") else { Issue.record("must follow"); return }
        #expect(explicit.isSameOrigin)
    }

    @Test("another host, port or scheme is another origin")
    func otherOrigins() {
        for location in ["https://cdn.example.com/x", "https://api.example.com:8443/x"] {
            guard case .refuse(.redirectRefused) = decide(302, location) else {
                Issue.record("\(location) must be refused by default")
                continue
            }
            guard case .follow(let hop) = decide(302, location, policy: .crossOriginWithoutCredentials) else {
                Issue.record("\(location) must be followed when opted in")
                continue
            }
            #expect(!hop.isSameOrigin)
        }
    }

    @Test("downgrades, plain HTTP off loopback, other schemes and user information are refused")
    func refusals() {
        #expect(decide(302, "http://api.example.com/a") == .refuse(.insecureConnection(host: "api.example.com")))
        #expect(
            decide(302, "http://other.example/a", from: "http://127.0.0.1:8080/a", policy: .crossOriginWithoutCredentials)
                == .refuse(.insecureConnection(host: "other.example")))
        guard case .follow = decide(302, "http://other.example/a", from: "http://127.0.0.1:8080/a",
            policy: .crossOriginWithoutCredentials, insecure: true) else {
            Issue.record("a service that allows plain HTTP follows it")
            return
        }
        guard case .refuse(.redirectRefused) = decide(302, "ftp://api.example.com/a") else { Issue.record("ftp"); return }
        guard case .refuse(.redirectRefused) = decide(302, "https://user:pw@api.example.com/a") else { Issue.record("userinfo"); return }
        guard case .refuse(.redirectRefused) = decide(302, "/a", hops: 5) else { Issue.record("hop limit"); return }
    }

    @Test("303 and a POST on 301/302 become GET without a body; 307 and 308 keep them")
    func methods() {
        let cases: [(Int, HTTPRequest.Method, HTTPRequest.Method, Bool)] = [
            (303, .post, .get, false), (303, .head, .head, true), (302, .post, .get, false), (301, .post, .get, false),
            (302, .put, .put, true), (307, .post, .post, true), (308, .delete, .delete, true),
        ]
        for (status, method, expected, keepsBody) in cases {
            guard case .follow(let hop) = decide(status, "/b", method: method) else {
                Issue.record("\(status) must follow")
                continue
            }
            #expect(hop.method == expected && hop.keepsBody == keepsBody, "\(status) \(method)")
        }
    }
}
