import Crypto
import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayDemoClient
import RunwayDemoServer
import RunwayExamples
import RunwayNIO
import RunwayOpenAPI
import RunwayServer
import RunwayTestSupport

/// The demo's generated client (`OpenAPI/runway-demo.yaml`) on an engine over a real transport,
/// against a demo server started for the test, for the examples' account service (whose
/// token the demo server renews).
struct GeneratedClientFixture: Sendable {
    let server: DemoServer
    let engine: Engine
    let client: Client
    let recorder: LoadRecorder
    let log: LogCapture

    static let service: ServiceID = .account
    static let secret = SymmetricKey(data: Data(repeating: 7, count: 32))

    /// Another client of the same engine and service, with other policies.
    func client(policies: [String: OperationPolicy]) throws -> Client {
        try Client(
            serverURL: Servers.Server1.url(),
            transport: Self.transport(engine: engine, policies: policies))
    }

    /// A transport whose operations wait 300 s for an answer, which no busy machine reaches:
    /// these tests are not about deadlines (CONTRIBUTING), and an operation past its
    /// 20-second default is sent again, which tests that count requests would see.
    static func transport(engine: Engine, policies: [String: OperationPolicy]) -> RunwayClientTransport {
        let patient = { (policy: OperationPolicy) -> OperationPolicy in
            var policy = policy
            policy.timeout = .seconds(300)
            return policy
        }
        return RunwayClientTransport(
            engine: engine, service: service, defaultPolicy: patient(OperationPolicy()), policies: policies.mapValues(patient))
    }
}

/// Runs `body` with a demo server (verifying signatures on `/signed` when `verifier` is given)
/// and the generated client on an engine over `kind`, whose service has the demo's token
/// authentication and `signer`; stops both after.
func withGeneratedClient<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ kind: TransportKind, verifier: SignatureVerifier<ServerRequestContext>? = nil,
    signer: (any RequestSigner)? = nil, policies: [String: OperationPolicy] = [:],
    _ body: (GeneratedClientFixture) async throws -> T
) async throws -> T {
    let server = try await DemoServer.start(signatureVerifier: verifier)
    let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
    let transport: any Transport = nio ?? URLSessionTransport()
    let recorder = LoadRecorder()
    let log = LogCapture()
    let engine = Engine(
        transport: transport, cache: try ResponseCache(), logger: Logger(label: "runway.test") { _ in log },
        recorder: recorder)
    // The examples' account service: a bearer token that starts out expired.
    let tokens = TokenAuthenticator(engine: engine, refreshToken: "refresh-1", stored: "expired")
    var service = accountService(baseURL: server.baseURL, authentication: Authentication(tokens))
    service.credentials.signer = signer
    try engine.register(service)
    let client = try Client(
        serverURL: Servers.Server1.url(),
        transport: GeneratedClientFixture.transport(engine: engine, policies: policies))
    let fixture = GeneratedClientFixture(server: server, engine: engine, client: client, recorder: recorder, log: log)
    return try await withCleanup({
        try? await nio?.shutdown()
        await server.stop()
    }) {
        try await body(fixture)
    }
}
