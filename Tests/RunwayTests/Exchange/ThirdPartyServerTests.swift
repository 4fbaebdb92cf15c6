import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// One exchange against httpbin, a server Runway's authors did not write: the same outcome on
/// every transport for challenges, cookies and bodies past the size limit.
@Suite("One exchange against httpbin", .timeLimit(.minutes(10)))
struct ThirdPartyServerTests {
    /// Runs `body` with httpbin and an engine over a fresh transport of `kind`, whose `.test`
    /// service is httpbin (with `cookies`, when given).
    func withEngine(
        _ kind: TransportKind, cookies: CookieJar? = nil, authentication: Authentication? = nil,
        _ body: (Engine, HTTPBin) async throws -> Void
    ) async throws {
        try await withHTTPBin { bin in
            let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
            let engine = Engine(transport: nio ?? URLSessionTransport())
            try engine.register(
                Service(
                    id: .test,
                    environment: .develop,
                    baseURLs: [.develop: bin.baseURL],
                    credentials: .init(authentication: authentication, cookies: cookies)))
            try await withCleanup({ try? await nio?.shutdown() }) {
                try await body(engine, bin)
            }
        }
    }

    @Test("a 401 with a challenge lands at once as that 401, on every transport",
          arguments: TransportKind.allCases, ["/status/401", "/basic-auth/user/secret", "/digest-auth/auth/user/secret"])
    func challengeLands(_ kind: TransportKind, _ path: String) async throws {
        try await withEngine(kind) { engine, _ in
            // A deadline no machine reaches: a transport that waits on the challenge instead of
            // landing it would fail this test by its timeout, not pass it slowly.
            let result = await engine.perform(AdHocAPI(path: path, timeout: .seconds(120)))
            guard case .failure(.httpStatus(401, _)) = result else {
                Issue.record("\(path) ended as \(result), not as its 401")
                return
            }
        }
    }

    @Test("an expired credential met with a 401 and its Basic challenge is refreshed once, and every load succeeds",
          arguments: TransportKind.allCases)
    func refreshAfterChallenge(_ kind: TransportKind) async throws {
        /// httpbin's `/basic-auth/user/secret` answers a wrong password with 401 and
        /// `WWW-Authenticate: Basic`: the stored password has "expired", and a refresh gets the
        /// current one.
        struct ExpiredPassword: Authenticator {
            let refreshes: TestBox<Int>
            func credential() async throws -> String? { "expired" }
            func apply(_ password: String, to request: inout HTTPRequest) {
                request.headerFields[.authorization] = "Basic " + Data("user:\(password)".utf8).base64EncodedString()
            }
            func refresh(_ expired: String?) async throws -> String {
                refreshes.mutate { $0 += 1 }
                return "secret"
            }
        }
        let refreshes = TestBox(0)
        try await withEngine(kind, authentication: Authentication(ExpiredPassword(refreshes: refreshes))) { engine, _ in
            let results = await withTaskGroup(of: Result<RawResponse, RunwayError>.self) { group in
                for _ in 0..<20 {
                    group.addTask { await engine.perform(AdHocAPI(path: "/basic-auth/user/secret", timeout: .seconds(120))) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { (try? $0.get())?.json?["authenticated"] == .bool(true) }.count == 20)
            #expect(refreshes.value == 1)
        }
    }

    @Test("no transport keeps a cookie behind the engine's back", arguments: TransportKind.allCases)
    func noHiddenCookieJar(_ kind: TransportKind) async throws {
        try await withEngine(kind) { engine, _ in
            // httpbin sets the cookie on a same-origin redirect to `/cookies`, which echoes what
            // the request carried.
            let set = try await engine.perform(AdHocAPI(path: "/cookies/set"), params: ["session": "abc"]).get()
            #expect(set.json?["cookies"] == .object([:]))
            let later = try await engine.perform(AdHocAPI(path: "/cookies")).get()
            #expect(later.json?["cookies"] == .object([:]))
        }
    }

    @Test("a service's cookie jar sends its cookies back, and a reset of its authentication empties it",
          arguments: TransportKind.allCases)
    func explicitCookieJar(_ kind: TransportKind) async throws {
        struct Anonymous: Authenticator {
            func credential() async throws -> String? { "" }
            func apply(_ token: String, to request: inout HTTPRequest) {}
            func refresh(_ expired: String?) async throws -> String { "" }
        }
        let jar = CookieJar()
        let authentication = Authentication(Anonymous())
        try await withEngine(kind, cookies: jar, authentication: authentication) { engine, _ in
            let set = try await engine.perform(AdHocAPI(path: "/cookies/set"), params: ["session": "abc"]).get()
            #expect(set.json?["cookies"]?["session"] == "abc", "the redirect's hop carries the cookie it set")
            #expect(jar.names == ["session"])
            authentication.reset()
            #expect(jar.names.isEmpty)
            let later = try await engine.perform(AdHocAPI(path: "/cookies")).get()
            #expect(later.json?["cookies"] == .object([:]))
        }
    }

    @Test("a body past the API's size limit fails as an invalid response, with or without a length",
          arguments: TransportKind.allCases, ["/bytes/60000", "/stream-bytes/60000?chunk_size=4096"])
    func sizeLimit(_ kind: TransportKind, _ path: String) async throws {
        try await withEngine(kind) { engine, _ in
            var api = AdHocAPI(path: String(path.prefix { $0 != "?" }))
            api.responseFormat = .raw
            api.maximumResponseSize = 50_000
            let params: Parameters = path.contains("chunk_size") ? ["chunk_size": 4096] : [:]
            let result = await engine.perform(api, params: params)
            guard case .failure(.invalidResponse(let reason)) = result else {
                Issue.record("\(path) ended as \(result)")
                return
            }
            #expect(reason.contains("50000"))
            api.maximumResponseSize = 60_000
            let whole = try await engine.perform(api, params: params).get()
            #expect(whole.body.count == 60_000)
        }
    }
}
