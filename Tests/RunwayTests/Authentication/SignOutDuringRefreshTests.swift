import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// A credential read from a "keychain" the test rewrites at sign-in, whose refresh the test
/// holds open: it says when it starts, and makes up a token the server never issued once let go.
struct HeldRefreshAuthenticator: Authenticator {
    let keychain: TestBox<String?>
    let refreshes: TestBox<Int>
    let started: AsyncStream<Void>.Continuation
    let release: AsyncStream<Void>

    func credential() async throws -> String? { keychain.value }

    func apply(_ token: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(token)"
    }

    func refresh(_ expired: String?) async throws -> String {
        refreshes.mutate { $0 += 1 }
        started.yield()
        for await _ in release { break }
        return "\(expired ?? "nobody")-refreshed"
    }
}

@Suite("A sign-out during a refresh", .timeLimit(.minutes(10)))
struct SignOutDuringRefreshTests {
    @Test(
        "the refresh in flight is dropped: the previous user's load ends, the next user's load reads the new credential",
        arguments: TransportKind.allCases)
    func signOutDuringRefresh(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let keychain = TestBox<String?>("A-expired")
            let refreshes = TestBox(0)
            let (started, startedSink) = AsyncStream<Void>.makeStream()
            let (release, releaseSink) = AsyncStream<Void>.makeStream()
            let signer = AuthorizationRecordingSigner()
            let authentication = Authentication(
                HeldRefreshAuthenticator(keychain: keychain, refreshes: refreshes, started: startedSink, release: release))
            try harness.engine.register(
                Service(
                    id: .test,
                    environment: .develop,
                    baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(authentication: authentication, signer: signer)))

            // User A's load meets the expiry, and its refresh starts (held open).
            let engine = harness.engine
            let userA = Task { await engine.perform(AdHocAPI(path: "/auth/me")) }
            var starts = started.makeAsyncIterator()
            await starts.next()

            // A signs out and B signs in: B's token is the one the server issued last.
            let issued = try await engine.perform(TokenAPI(), params: ["refresh_token": "b"]).get()
            let tokenB = try #require(issued.json?["access_token"]?.stringValue)
            keychain.set(tokenB)
            authentication.reset()
            let userB = Task { await engine.perform(AdHocAPI(path: "/auth/me")) }

            // A's refresh ends now, after the reset (B's load may or may not have joined it).
            releaseSink.finish()
            let resultB = await userB.value
            let resultA = await userA.value

            #expect(try resultB.get().json?["data"]?["token"]?.stringValue == tokenB, "B's load carries B's credential")
            guard case .failure(.unauthenticated(let reason)) = resultA else {
                Issue.record("A's load must end unauthenticated, got \(resultA)")
                return
            }
            #expect(reason.contains("reset"))
            #expect(!signer.seen.value.contains("Bearer A-expired-refreshed"), "the dropped refresh was never sent: \(signer.seen.value)")
            #expect(refreshes.value == 1)
            #expect(harness.probe.count("/auth/me/refused") == 1, "only A's first request was refused")

            // The next load leases B's credential at once.
            let next = try await engine.perform(AdHocAPI(path: "/auth/me")).get()
            #expect(next.json?["data"]?["token"]?.stringValue == tokenB)
            #expect(refreshes.value == 1)
        }
    }
}

/// Runs `signIn` once, while the first request is signed.
final class SignInOnFirstRequest: RequestSigner, Sendable {
    private let pending: TestBox<(@Sendable () -> Void)?>

    init(_ signIn: @escaping @Sendable () -> Void) {
        pending = TestBox(signIn)
    }

    func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        let signIn = pending.mutate { pending in
            defer { pending = nil }
            return pending
        }
        signIn?()
    }
}
