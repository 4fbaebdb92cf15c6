import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import Testing

extension Environment {
    static let staging: Environment = "staging"
}

/// Names and environments an app can rely on across modules.
@Suite("API names and environments")
struct APIIdentityTests {
    /// A type named like one in `RunwayExamples`, in another module.
    struct SecondHandListAPI: API {
        var service: ServiceID { .test }
        var path: String { "/echo/mine" }
        var method: HTTPRequest.Method { .get }
    }

    @Test("the default API name is module-qualified, so same-named types in two modules never collide")
    func moduleQualifiedNames() async throws {
        let theirs = RunwayExamples.SecondHandListAPI()
        let mine = SecondHandListAPI()
        #expect(theirs.name == "RunwayExamples.SecondHandListAPI")
        #expect(mine.name.hasPrefix("RunwayTests.") && mine.name.hasSuffix(".SecondHandListAPI"))
        #expect(mine.name != theirs.name)
        // A stub answers each by its own name.
        let stub = StubTransport(sampleData: [mine.name: .json(["who": "mine"])])
        let engine = Engine(transport: stub)
        engine.register(Service(id: .test, baseURLs: [.release: "https://api.example.com"]))
        engine.register(listingService(baseURL: "https://api.example.com"))
        #expect(try await engine.perform(mine, params: [:]).get().json?["who"] == "mine")
        guard case .failure(.httpStatus(404, _)) = await engine.perform(theirs, params: [:]) else {
            Issue.record("the other module's API has no sample and must not get this one's")
            return
        }
    }

    @Test("an app declares its own environments beside the three Runway names")
    func openEnvironments() async throws {
        try await withHarness { harness in
            harness.engine.register(
                Service(
                    id: .test, environment: .release,
                    baseURLs: [.release: "https://api.example.com", .staging: harness.server.baseURL]))
            #expect(harness.engine.setEnvironment(.staging, for: .test))
            let response = try await harness.engine.perform(TestAPI(path: "/echo/staging"), params: [:]).get()
            #expect(response.json?["path"] == "/echo/staging")
            #expect(Environment.staging.description == "staging")
            #expect(Environment.releaseCandidate.rawValue == "releaseCandidate", "raw values are part of cache keys")
        }
    }
}
