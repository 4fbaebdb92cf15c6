import Crypto
import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing

/// A key in a field of the app's own naming, beside a bearer token.
struct KeyAndTokenAuthenticator: Authenticator {
    func credential() async throws -> String? { "key-secret" }

    func apply(_ key: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer bearer-secret"
        request.headerFields[HTTPField.Name("X-Api-Key")!] = key
    }

    func refresh(_ expired: String?) async throws -> String { "key-secret" }
}

@Suite("Credentials never reach app code", .timeLimit(.minutes(10)))
struct CredentialRedactionTests {
    @Test(
        "the request an answer hands app code names every field but carries no credential: Authorization, the authenticator's own field, Cookie, the signature",
        arguments: TransportKind.allCases)
    func redacted(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var common = HTTPFields()
            common[.cookie] = "session=cookie-secret"
            try harness.engine.register(
                Service(
                    id: .test,
                    environment: .develop,
                    baseURLs: [.develop: harness.server.baseURL],
                    commonHeaders: common,
                    credentials: .init(authentication: Authentication(KeyAndTokenAuthenticator()), signer: HMACSigner(keyID: "app-2026", secret: SymmetricKey(size: .bits256)))))
            let response = try await harness.engine.perform(AdHocAPI(path: "/echo/who")).get()

            // The server received them all…
            let received = try #require(response.json?["headers"])
            #expect(received["x-api-key"] == "key-secret")
            #expect(received["authorization"] == "Bearer bearer-secret")
            #expect(received["cookie"] == "session=cookie-secret")

            // …and app code sees that they were sent, not what they were.
            let fields = response.request.headerFields
            for name in ["Authorization", "X-Api-Key", "Cookie", "X-Runway-Signature"] {
                #expect(fields[HTTPField.Name(name)!] == "<redacted>", "\(name)")
            }
            #expect(fields[RequestSignature.Field.keyID] == "app-2026", "what names the request stays")
            #expect(response.request.path == "/echo/who")
            var dumped = ""
            dump(response.request, to: &dumped)
            #expect(!dumped.contains("secret"), "\(dumped)")
        }
    }
}
