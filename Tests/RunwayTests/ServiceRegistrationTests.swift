import Crypto
import Foundation
import HTTPTypes
import Runway
import RunwayServer
import Testing

/// A service whose parts contradict each other is refused when it is registered, with an error
/// that says which parts: never a load whose credential a signature silently overwrote.
@Suite("Contradictory services are refused at registration")
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
    static func api(_ path: String) -> TestAPI {
        var api = TestAPI(path: path)
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
                id: Self.contradiction, environment: .develop, baseURLs: [.develop: harness.server.baseURL], signer: Self.aws(),
                authentication: Authentication(Bearer()))
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
                    id: Self.contradiction, environment: .develop, baseURLs: [.develop: harness.server.baseURL], signer: Self.aws(),
                    authentication: Authentication(Bearer(field: session))))
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
                id: Self.contradiction, environment: .develop, baseURLs: base, commonHeaders: [.authorization: "Basic dXNlcg=="],
                authentication: Authentication(Bearer()))
            let overSignature = Service(
                id: Self.contradiction, environment: .develop, baseURLs: base,
                commonHeaders: [RequestSignature.Field.nonce: "fixed"],
                signer: HMACSigner(keyID: "k", secret: SymmetricKey(size: .bits256)))
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
