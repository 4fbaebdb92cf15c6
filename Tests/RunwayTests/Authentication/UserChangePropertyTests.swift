import Foundation
import HTTPTypes
import PropertyBased
import Runway
import RunwayTestSupport
import Testing

/// Signs each request with nothing, but may switch the signed-in user while the load's first
/// request is on its way (after its credential was applied).
final class SwitchingSigner: RequestSigner, Sendable {
    let switchNow = TestBox<(@Sendable () -> Void)?>(nil)

    func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        let pending = switchNow.mutate { pending in
            defer { pending = nil }
            return pending
        }
        pending?()
    }
}

/// Random sequences of loads and sign-ins through the real engine over real HTTP: whatever the
/// order, no request is sent, and no answer delivered, under a user other than the one it was
/// made for.
@Suite("Whose is it, for any sequence of loads and sign-ins", .timeLimit(.minutes(10)))
struct UserChangePropertyTests {
    /// One step: a load of one of three routes (a plain answer, a redirect hop, a 503 then an
    /// answer), with the user switched at none, one or another point of it.
    struct Step: CustomStringConvertible {
        enum Route: CaseIterable { case plain, hop, retried }
        enum Switch: CaseIterable { case none, onTheWire, duringBackOff }
        let route: Route
        let switchAt: Switch

        init(_ code: Int) {
            route = Route.allCases[code % 3]
            switchAt = Switch.allCases[(code / 3) % 3]
        }

        var description: String { "\(route)/\(switchAt)" }
    }

    @Test("no request or answer crosses users", arguments: TransportKind.allCases)
    func neverCrossesUsers(_ kind: TransportKind) async throws {
        try await withServer(kind) { transport, server in
            let tap = Wiretap(transport)
            // The server accepts only the latest token it issued: the signed-in user's. A token of a
            // user who has since signed out is refused with 401, which sends the engine renewing.
            let keychain = TestBox<String?>(nil)
            let nextToken = TestBox("")
            let authentication = Authentication(KeychainAuthenticator(keychain: keychain, refreshes: TestBox(0)))
            let signIn: @Sendable () -> Void = {
                keychain.set(nextToken.value)
                authentication.reset()
            }
            let backOffSwitch = TestBox<(@Sendable () -> Void)?>(nil)
            let engine = Engine(
                transport: tap, metrics: nil,
                sleep: { _ in
                    backOffSwitch.mutate { pending in
                        defer { pending = nil }
                        return pending
                    }?()
                })
            let signer = SwitchingSigner()
            try engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: server.baseURL],
                    credentials: .init(authentication: authentication, signer: signer)))
            try engine.register(Service(id: "tokens", environment: .develop, baseURLs: [.develop: server.baseURL]))
            let issue = AdHocAPI(service: "tokens", path: "/auth/token", method: .post, paramEncoding: .json)
            /// The next user's token, issued now: from here on the server accepts only it.
            func issueToken() async throws -> String {
                let issued = try await engine.perform(issue, params: ["refresh_token": "r"]).get()
                return try #require(issued.json?["access_token"]?.stringValue)
            }
            keychain.set(try await issueToken())

            await propertyCheck(count: 12, input: Gen.int(in: 0...8).array(of: 1...8)) { codes in
                for step in codes.map(Step.init) {
                    var api: AdHocAPI
                    var params: Parameters = [:]
                    switch step.route {
                    case .plain: api = AdHocAPI(path: "/auth/me")
                    case .hop: api = AdHocAPI(path: "/faults/redirect-to/302/auth/me")
                    case .retried:
                        api = AdHocAPI(path: "/faults/flaky")
                        api.retryPolicy = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(1), jitter: 0)
                        params = ["key": .string(UUID().uuidString)]
                    }
                    switch step.switchAt {
                    case .none: break
                    case .onTheWire:
                        nextToken.set(try await issueToken())
                        signer.switchNow.set(signIn)
                    case .duringBackOff:
                        // Only a retried load has a back-off to switch in.
                        guard step.route == .retried else { break }
                        nextToken.set(try await issueToken())
                        backOffSwitch.set(signIn)
                    }
                    let before = tap.sent.count
                    let result = await engine.perform(api, params: params)
                    // A switch the load did not reach happens now, as the app's sign-in would.
                    if let pending = signer.switchNow.mutate({ pending in defer { pending = nil }; return pending }) { pending() }
                    if let pending = backOffSwitch.mutate({ pending in defer { pending = nil }; return pending }) { pending() }

                    // What went on the wire for this load (the loads run one after another): one
                    // identity, whatever the attempts, hops and renewals.
                    let sent = tap.sent.dropFirst(before).filter { $0.head.path?.hasPrefix("/auth/token") != true }
                    let identities = Set(sent.compactMap { $0.head.headerFields[.authorization] })
                    #expect(identities.count == 1, "\(step): the load went out as \(identities)")
                    switch result {
                    case .success(let response):
                        let answered = response.json?["data"]?["token"]?.stringValue.map { "Bearer \($0)" }
                            ?? response.json?["data"]?["authorization"]?.stringValue
                        #expect(answered.map { identities == [$0] } == true, "\(step): answered for \(String(describing: answered)), sent as \(identities)")
                    case .failure(let error):
                        #expect(error == .userChanged, "\(step): \(error)")
                        let switched = step.switchAt == .onTheWire || (step.switchAt == .duringBackOff && step.route == .retried)
                        #expect(switched, "\(step): failed with no switch")
                    }
                }
            }
        }
    }
}
