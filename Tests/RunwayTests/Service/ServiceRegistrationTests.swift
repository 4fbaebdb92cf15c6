import Crypto
import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// A service whose parts contradict each other is refused when it is registered, with an error
/// that says which parts: never a load whose credential a signature silently overwrote.
@Suite("Contradictory services are refused at registration", .timeLimit(.minutes(10)))
@MainActor
struct ServiceRegistrationTests {
    /// A bearer token; `field` is where it goes.
    struct Bearer: Authenticator {
        var field: HTTPField.Name = .authorization
        func credential() async throws -> String? { "token-1" }
        func apply(_ token: String, to request: inout HTTPRequest) {
            request.headerFields[field] = field == .authorization ? "Bearer \(token)" : token
        }
        func refresh(_ expired: String?) async throws -> String { "token-2" }
        var credentialFields: Set<HTTPField.Name> { [field] }
    }

    static let contradiction: ServiceID = "contradiction"

    /// An API of the service under test.
    static func api(_ path: String) -> AdHocAPI {
        var api = AdHocAPI(path: path)
        api.service = contradiction
        return api
    }

    static func aws() -> AWSSignatureV4Signer {
        AWSSignatureV4Signer(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", region: "us-east-1", service: "s3")
    }

    @Test("an AWS signer with a bearer token in Authorization is refused, naming the field; nothing is registered")
    func awsSignerOverBearerToken() async throws {
        try await withHarness { harness in
            let service = Service(
                id: Self.contradiction,
                environment: .develop,
                baseURLs: [.develop: harness.server.baseURL],
                credentials: .init(authentication: Authentication(Bearer()), signer: Self.aws()))
            #expect {
                try harness.engine.register(service)
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                return reason.contains("Authorization") && reason.contains("AWSSignatureV4Signer")
            }
            #expect(harness.engine.service(Self.contradiction) == nil)
            let refused = await harness.engine.perform(Self.api("/echo/never"))
            guard case .failure(.invalidRequest) = refused else {
                Issue.record("no service may be registered, got \(refused)")
                return
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("the same signer with the credential in its own field registers, and both reach the server intact", arguments: TransportKind.allCases)
    func credentialInItsOwnField(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let session = HTTPField.Name("X-Session-Token")!
            try harness.engine.register(
                Service(
                    id: Self.contradiction,
                    environment: .develop,
                    baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(authentication: Authentication(Bearer(field: session)), signer: Self.aws())))
            let echoed = try await harness.engine.perform(Self.api("/echo/both")).get()
            let headers = echoed.json?["headers"]
            #expect(headers?["x-session-token"]?.stringValue == "token-1")
            #expect(headers?["authorization"]?.stringValue?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") == true)
        }
    }

    @Test("a common header that the credential or the signature writes is refused")
    func commonHeaderUnderAnOwner() async throws {
        try await withHarness { harness in
            let base = [Runway.Environment.develop: harness.server.baseURL]
            let overCredential = Service(
                id: Self.contradiction,
                environment: .develop,
                baseURLs: base,
                commonHeaders: [.authorization: "Basic dXNlcg=="],
                credentials: .init(authentication: Authentication(Bearer())))
            let overSignature = Service(
                id: Self.contradiction,
                environment: .develop,
                baseURLs: base,
                commonHeaders: [RequestSignature.Field.nonce: "fixed"],
                credentials: .init(signer: HMACSigner(keyID: "k", secret: SymmetricKey(size: .bits256))))
            for (service, owner) in [(overCredential, "authentication"), (overSignature, "signer")] {
                #expect {
                    try harness.engine.register(service)
                } throws: { error in
                    guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                    return reason.contains("its \(owner) writes")
                }
            }
            #expect(harness.engine.service(Self.contradiction) == nil)
        }
    }
}

/// A service's connection settings that contradict its base URLs are refused when it is
/// registered: a pin that would never be checked, a selector that would never be used.
@Suite("Contradictory connection settings are refused at registration", .timeLimit(.minutes(10)))
@MainActor
struct ConnectionRegistrationTests {
    static let pinned: ServiceID = "pinned-over-http"

    @Test("a pinned host that a base URL reaches over plain HTTP is refused, and nothing is sent unpinned", arguments: TransportKind.allCases)
    func pinnedHostOverPlainHTTP(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let pins = PublicKeyPins(
                host: "127.0.0.1", primary: "Z9p8FJv4+QvZG2LGj6ZhpeD7QF0pp3C5yj+Tl1xWJUg=",
                backups: ["q2A0pl3cRy8ce6ni2LSOD2GIj0N+nRRBF6KcgfOIPxo="])
            let service = Service(
                id: Self.pinned, environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                connection: .init(pins: [pins]))
            #expect {
                try harness.engine.register(service)
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                return reason.contains("pins 127.0.0.1") && reason.contains("plain HTTP")
            }
            #expect(harness.engine.service(Self.pinned) == nil)
            var api = AdHocAPI(path: "/echo/pinned")
            api.service = Self.pinned
            guard case .failure(.invalidRequest) = await harness.engine.perform(api) else {
                Issue.record("the refused service must not carry a load")
                return
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("an endpoint selector for a host none of the base URLs names is refused")
    func selectorForAnotherHost() async throws {
        try await withHarness { harness in
            let selector = EndpointSelector(
                host: "api.runway.test", port: harness.server.port, candidates: ["127.0.0.1"], scheme: "http",
                probing: EndpointSelectorTests.manual)
            let stray = Service(
                id: "stray-selector", environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                connection: .init(endpoints: selector))
            #expect {
                try harness.engine.register(stray)
            } throws: { error in
                guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                return reason.contains("api.runway.test") && reason.contains("none of its base URLs")
            }
            // Named by a base URL of another environment, the same selector is taken: an app
            // may register its develop environment with the release host's selector on it.
            let named = Service(
                id: "named-selector", environment: .develop,
                baseURLs: [.develop: harness.server.baseURL, .release: "https://api.runway.test"],
                connection: .init(endpoints: selector))
            try harness.engine.register(named)
            var api = AdHocAPI(path: "/echo/named")
            api.service = "named-selector"
            #expect(try await harness.engine.perform(api).get().status.code == 200)
        }
    }
}
