import Foundation
import OpenAPIRuntime
import Runway
import RunwayDemoClient
import Testing
@testable import RunwayOpenAPI

/// What the transport takes from a generated request before the engine builds it again.
@Suite("A generated request, taken apart", .timeLimit(.minutes(10)))
struct OperationTargetTests {
    @Test("the query becomes params: escapes decoded, a repeated name an array, a name without a value empty")
    func queryBecomesParams() throws {
        let target = try OperationTarget("/listings/esf?tag=a&tag=b%26c&city=S%C3%A3o%20Paulo&plus=1+1&flag&empty=")
        #expect(target.path == "/listings/esf")
        #expect(target.params == [
            "tag": ["a", "b&c"], "city": "São Paulo", "plus": "1+1", "flag": "", "empty": "",
        ])
        let bare = try OperationTarget("/health")
        #expect(bare.path == "/health" && bare.params.isEmpty)
    }

    @Test("a malformed escape is refused as an invalid request")
    func malformedEscape() {
        #expect(throws: RunwayError.self) { try OperationTarget("/listings/esf?city=%E0%A4%A") }
    }

    @Test("a request body over the limit is refused before anything is sent")
    func bodyOverTheLimit() async throws {
        let stub = StubTransport(sampleData: [:])
        let engine = Engine(transport: stub)
        try engine.register(Service(id: "demo", baseURLs: [.release: "https://api.example.com"]))
        let client = try Client(
            serverURL: Servers.Server1.url(),
            transport: RunwayClientTransport(engine: engine, service: "demo", maximumRequestBodySize: 8))
        await #expect {
            _ = try await client.signedEchoPost(path: .init(name: "note"), body: .json(.init(text: "longer than eight bytes")))
        } throws: { error in
            guard case .invalidRequest? = (error as? ClientError)?.underlyingError as? RunwayError else { return false }
            return true
        }
        #expect(stub.requests.isEmpty)
    }
}
