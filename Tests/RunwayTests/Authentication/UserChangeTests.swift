import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing

/// An authenticator over an app's keychain: the credential is whatever the keychain holds now.
struct KeychainAuthenticator: Authenticator {
    let keychain: TestBox<String?>
    let refreshes: TestBox<Int>

    func credential() async throws -> String? { keychain.value }

    func apply(_ token: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(token)"
    }

    func refresh(_ expired: String?) async throws -> String {
        refreshes.mutate { $0 += 1 }
        guard let token = keychain.value else { throw RunwayError.unauthenticated(reason: "signed out") }
        return token
    }
}

/// A request belongs to the user it was made for: after a sign-out or a new sign-in
/// (``Authentication/reset()``) it is never sent again, and nothing of its answer is kept, under
/// the next user's identity — at every point where the user can change.
@Suite("Whose is it: a request, its retries, hops, cookies and cached answer stay with their user", .timeLimit(.minutes(10)))
struct UserChangeTests {
    /// An engine over `kind` whose `.test` service signs in with `keychain` (A's token at first),
    /// its signer optionally switching to user B while the first request is signed — after its
    /// credential was applied, so it goes on the wire as A's.
    static func withAccount(
        _ kind: TransportKind, switchOnFirstRequest: Bool = true, cookies: CookieJar? = nil, cache: ResponseCache? = nil,
        sleep: (@Sendable (Duration) async throws -> Void)? = nil, authenticationBox: TestBox<Authentication?> = TestBox(nil),
        nextToken: TestBox<String> = TestBox("B-token"),
        _ body: (Harness, _ keychain: TestBox<String?>, _ refreshes: TestBox<Int>) async throws -> Void
    ) async throws {
        try await withHarness(kind, cache: cache, sleep: sleep) { harness in
            let keychain = TestBox<String?>("A-token")
            let refreshes = TestBox(0)
            let authentication = Authentication(KeychainAuthenticator(keychain: keychain, refreshes: refreshes))
            authenticationBox.set(authentication)
            let signer: (any RequestSigner)? =
                switchOnFirstRequest
                ? SignInOnFirstRequest {
                    keychain.set(nextToken.value)
                    authentication.reset()
                } : nil
            try harness.engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(authentication: authentication, signer: signer, cookies: cookies)))
            try await body(harness, keychain, refreshes)
        }
    }

    @Test(
        "a POST refused with A's token while B signed in is not sent again with B's: it ends as userChanged",
        arguments: TransportKind.allCases)
    func refusedAfterTheSwitch(_ kind: TransportKind) async throws {
        let tokenB = TestBox("")
        try await Self.withAccount(kind, nextToken: tokenB) { harness, keychain, refreshes in
            // B's token is the one the server accepts, issued through a service of its own; A's is refused.
            try harness.engine.register(
                Service(id: "tokens", environment: .develop, baseURLs: [.develop: harness.server.baseURL]))
            let tokenAPI = AdHocAPI(service: "tokens", path: "/auth/token", method: .post, paramEncoding: .json)
            let issued = try await harness.engine.perform(tokenAPI, params: ["refresh_token": "b"]).get()
            tokenB.set(try #require(issued.json?["access_token"]?.stringValue))
            let order = AdHocAPI(path: "/auth/orders", method: .post)
            let result = await harness.engine.perform(order, params: ["item": "bike"])
            #expect(throws: RunwayError.userChanged) { try result.get() }
            #expect(keychain.value == tokenB.value, "B is signed in")
            #expect(harness.probe.count("/auth/orders/refused") == 1, "A's request went out once, as A's")
            #expect(harness.probe.count("/auth/orders") == 0, "nothing was placed on B's account")
            #expect(refreshes.value == 0)
        }
    }

    @Test("a retry whose back-off spans a sign-in is not sent: it ends as userChanged", arguments: TransportKind.allCases)
    func retryAfterTheSwitch(_ kind: TransportKind) async throws {
        let box = TestBox<Authentication?>(nil)
        // The back-off is where the user changes.
        let sleep: @Sendable (Duration) async throws -> Void = { _ in box.value?.reset() }
        try await Self.withAccount(kind, switchOnFirstRequest: false, sleep: sleep, authenticationBox: box) { harness, _, _ in
            var flaky = AdHocAPI(path: "/faults/flaky")
            flaky.retryPolicy = RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1), jitter: 0)
            let key = UUID().uuidString
            let result = await harness.engine.perform(flaky, params: ["key": .string(key), "failures": 1])
            #expect(throws: RunwayError.userChanged) { try result.get() }
            #expect(harness.probe.count("/faults/flaky/\(key)") == 1, "the first attempt only")
        }
    }

    @Test("a redirect hop after a sign-in is not followed: it ends as userChanged", arguments: TransportKind.allCases)
    func hopAfterTheSwitch(_ kind: TransportKind) async throws {
        try await Self.withAccount(kind) { harness, _, _ in
            let result = await harness.engine.perform(AdHocAPI(path: "/faults/redirect-to/302/echo/after"))
            #expect(throws: RunwayError.userChanged) { try result.get() }
            #expect(harness.probe.count("/faults/redirect") == 1)
            #expect(harness.probe.count("/echo") == 0, "the hop was not sent")
        }
    }

    @Test(
        "a cookie set in answer to A's request after B signed in is not stored; one set within a sign-in is",
        arguments: TransportKind.allCases)
    func cookieAfterTheSwitch(_ kind: TransportKind) async throws {
        try await Self.withAccount(kind, cookies: CookieJar()) { harness, _, _ in
            _ = try await harness.engine.perform(AdHocAPI(path: "/faults/set-cookie")).get()
            let next = try await harness.engine.perform(AdHocAPI(path: "/echo/next")).get()
            #expect(next.json?["headers"]?["cookie"] == nil, "A's session is not B's: \(String(describing: next.json?["headers"]))")
            // Within one sign-in the jar works as before.
            _ = try await harness.engine.perform(AdHocAPI(path: "/faults/set-cookie")).get()
            let later = try await harness.engine.perform(AdHocAPI(path: "/echo/later")).get()
            #expect(later.json?["headers"]?["cookie"]?.stringValue == "session=abc")
        }
    }

    @Test(
        "an answer fetched for A is not cached once B signed in; one fetched within a sign-in is",
        arguments: TransportKind.allCases)
    func cacheWriteAfterTheSwitch(_ kind: TransportKind) async throws {
        let cache = try ResponseCache()
        try await Self.withAccount(kind, cache: cache) { harness, _, _ in
            var cached = AdHocAPI(path: "/faults/cacheable")
            cached.cachePolicy = CachePolicy.memory(lifetime: .seconds(3600)).sensitiveComponent("me")
            let key = UUID().uuidString
            _ = try await harness.engine.perform(cached, params: ["key": .string(key)]).get()
            let second = try await harness.engine.perform(cached, params: ["key": .string(key)]).get()
            #expect(second.origin == .network, "A's answer was not kept for B")
            let third = try await harness.engine.perform(cached, params: ["key": .string(key)]).get()
            #expect(third.origin != .network, "B's answer, fetched within B's sign-in, is kept")
            #expect(harness.probe.count("/faults/cacheable/\(key)") == 2)
        }
    }
}
