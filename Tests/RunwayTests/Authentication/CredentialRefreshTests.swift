import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// A bearer token renewed at the demo server's token endpoint, through the engine itself.
struct BearerAuthenticator: Authenticator {
    let engine: Engine
    /// What the "keychain" holds at launch.
    var stored: String?
    var refreshToken = "refresh-1"
    /// When set, refresh makes this token up instead of asking the server.
    var madeUpToken: String?
    /// Whether the token request wrongly asks for the credential it is refreshing.
    var tokenRequestAuthenticates = false

    func credential() async throws -> String? { stored }

    func apply(_ token: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(token)"
    }

    func refresh(_ expired: String?) async throws -> String {
        if let madeUpToken { return madeUpToken }
        let response = try await engine.perform(
            TokenAPI(authenticates: tokenRequestAuthenticates), params: ["refresh_token": .string(refreshToken)]
        ).get()
        guard let token = response.json?["access_token"]?.stringValue else {
            throw RunwayError.invalidResponse(reason: "no access_token")
        }
        return token
    }
}

/// The token endpoint: on the same service, so it opts out of the authenticator.
struct TokenAPI: API {
    var service: ServiceID { .test }
    var path: String { "/auth/token" }
    var method: HTTPRequest.Method { .post }
    var paramEncoding: ParamEncoding { .json }
    var authenticates = false
    var retryPolicy: RetryPolicy { .never }
}

/// Records the `Authorization` each request carried when it was signed.
final class AuthorizationRecordingSigner: RequestSigner, Sendable {
    let seen = TestBox<[String]>([])

    func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        let value = request.headerFields[.authorization] ?? "none"
        seen.mutate { $0.append(value) }
        request.headerFields[HTTPField.Name("X-Test-Signed")!] = value
    }
}

@Suite("Credential refresh", .timeLimit(.minutes(10)))
struct CredentialRefreshTests {
    static func register(
        _ harness: Harness, _ authenticator: BearerAuthenticator, signer: (any RequestSigner)? = nil
    ) throws -> Authentication {
        let authentication = Authentication(authenticator)
        try harness.engine.register(
            Service(
                id: .test,
                environment: .develop,
                baseURLs: [.develop: harness.server.baseURL],
                credentials: .init(authentication: authentication, signer: signer)))
        return authentication
    }

    /// `count` loads of `/auth/me` at once, each its own request (not shared as identical loads).
    static func loadTogether(_ count: Int, _ harness: Harness) async -> [Result<RawResponse, RunwayError>] {
        let api = {
            var api = AdHocAPI(path: "/auth/me")
            api.sharesIdenticalLoads = false
            return api
        }()
        return await withTaskGroup(of: Result<RawResponse, RunwayError>.self) { group in
            for _ in 0..<count { group.addTask { await harness.engine.perform(api) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("32 concurrent loads with an expired token cause one refresh at the server, and all 32 succeed",
          arguments: TransportKind.allCases)
    func oneRefreshForAll(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            _ = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: "expired"))
            let results = await Self.loadTogether(32, harness)
            let tokens = results.compactMap { try? $0.get().json?["data"]?["token"]?.stringValue }
            #expect(tokens.count == 32, "every load succeeds: \(results.filter { (try? $0.get()) == nil })")
            #expect(Set(tokens) == ["access-1"])
            #expect(harness.probe.count("/auth/token") == 1)
            #expect(harness.probe.count("/auth/me") == 32)
            #expect((1...32).contains(harness.probe.count("/auth/me/refused")))
        }
    }

    @Test("with no stored credential, the first loads wait for one refresh before anything is sent")
    func noStoredCredential() async throws {
        try await withHarness { harness in
            _ = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: nil))
            let results = await Self.loadTogether(8, harness)
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            #expect(harness.probe.count("/auth/token") == 1)
            #expect(harness.probe.count("/auth/me/refused") == 0)
        }
    }

    @Test("a failed refresh fails every load that met the expiry with one unauthenticated error")
    func failedRefresh() async throws {
        try await withHarness { harness in
            _ = try Self.register(
                harness, BearerAuthenticator(engine: harness.engine, stored: "expired", refreshToken: "revoked"))
            let results = await Self.loadTogether(16, harness)
            for result in results {
                guard case .failure(.unauthenticated(let reason)) = result else {
                    Issue.record("expected unauthenticated, got \(result)")
                    continue
                }
                #expect(reason.contains("401"))
            }
            #expect(harness.probe.count("/auth/token") == 1)
            #expect(harness.probe.count("/auth/me") == 0)
        }
    }

    @Test("a refreshed credential the server refuses too ends the load instead of refreshing forever")
    func refusedAfterRefresh() async throws {
        try await withHarness { harness in
            _ = try Self.register(
                harness, BearerAuthenticator(engine: harness.engine, stored: "expired", madeUpToken: "never-issued"))
            let result = await harness.engine.perform(AdHocAPI(path: "/auth/me"))
            guard case .failure(.unauthenticated(let reason)) = result else {
                Issue.record("expected unauthenticated, got \(result)")
                return
            }
            #expect(reason.contains("refreshed credential"))
            #expect(harness.probe.count("/auth/me/refused") == 2)
        }
    }

    @Test("a refresh whose own request needs the credential fails at once instead of waiting for itself")
    func refreshNeedingItself() async throws {
        try await withHarness { harness in
            _ = try Self.register(
                harness, BearerAuthenticator(engine: harness.engine, stored: nil, tokenRequestAuthenticates: true))
            let result = await harness.engine.perform(AdHocAPI(path: "/auth/me"))
            guard case .failure(.unauthenticated(let reason)) = result else {
                Issue.record("expected unauthenticated, got \(result)")
                return
            }
            #expect(reason.contains("authenticates: false"))
            #expect(harness.probe.count("/auth/token") == 0)
        }
    }

    @Test("the signer runs after the credential is applied, on every attempt", arguments: TransportKind.allCases)
    func signedAfterCredential(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let signer = AuthorizationRecordingSigner()
            _ = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: "expired"), signer: signer)
            let response = try await harness.engine.perform(AdHocAPI(path: "/auth/me")).get()
            #expect(response.status == .ok)
            // The token request opts out of the credential, and is signed without one.
            #expect(signer.seen.value == ["Bearer expired", "none", "Bearer access-1"])
        }
    }

    @Test("reset forgets the credential in memory, so the next load reads the stored one again")
    func reset() async throws {
        try await withHarness { harness in
            let authentication = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: nil))
            _ = try await harness.engine.perform(AdHocAPI(path: "/auth/me")).get()
            authentication.reset()
            _ = try await harness.engine.perform(AdHocAPI(path: "/auth/me")).get()
            // Nothing stored, so after the reset a second refresh supplies the credential.
            #expect(harness.probe.count("/auth/token") == 2)
            #expect(harness.probe.count("/auth/me") == 2)
        }
    }

    @Test("an authenticated API's answers are not cached, since the key cannot tell whose they are")
    func notCached() async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            _ = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: nil))
            let api = AdHocAPI(path: "/auth/me", cachePolicy: .memory(lifetime: .seconds(600)))
            _ = try await harness.engine.perform(api).get()
            let second = try await harness.engine.perform(api).get()
            #expect(second.origin == .network)
            #expect(harness.probe.count("/auth/me") == 2)
        }
    }

    @Test("a redirect to another origin does not carry the credential")
    func crossOriginHopIsBare() async throws {
        try await withHarness { harness in
            _ = try Self.register(harness, BearerAuthenticator(engine: harness.engine, stored: nil))
            let other = harness.server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let api = AdHocAPI(path: "/faults/redirect", redirectPolicy: .crossOriginWithoutCredentials)
            let response = try await harness.engine.perform(api, params: ["to": .string("\(other)/echo/landed")]).get()
            let headers = response.json?["headers"]
            #expect(response.url?.host == "localhost")
            #expect(headers?["authorization"] == nil)
        }
    }
}
