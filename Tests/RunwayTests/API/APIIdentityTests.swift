import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import RunwayStorage
import RunwayTestSupport
import Testing

extension Environment {
    static let staging: Environment = "staging"
}

/// A `private` API type named like one in `APINameClash.swift`.
private struct ClashingAPI: API {
    var service: ServiceID { .test }
    var path: String { "/echo/this-file" }
    var method: HTTPRequest.Method { .get }
}

/// Names and environments an app can rely on across modules.
@Suite("API names and environments", .timeLimit(.minutes(10)))
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
        try engine.register(Service(id: .test, baseURLs: [.release: "https://api.example.com"]))
        try engine.register(listingService(baseURL: "https://api.example.com"))
        #expect(try await engine.perform(mine, params: [:]).get().json?["who"] == "mine")
        guard case .failure(.httpStatus(404, _)) = await engine.perform(theirs, params: [:]) else {
            Issue.record("the other module's API has no sample and must not get this one's")
            return
        }
    }

    @Test("an app declares its own environments beside the three Runway names")
    func openEnvironments() async throws {
        try await withHarness { harness in
            try harness.engine.register(
                Service(
                    id: .test, environment: .release,
                    baseURLs: [.release: "https://api.example.com", .staging: harness.server.baseURL]))
            #expect(harness.engine.setEnvironment(.staging, for: .test))
            let response = try await harness.engine.perform(AdHocAPI(path: "/echo/staging"), params: [:]).get()
            #expect(response.json?["path"] == "/echo/staging")
            #expect(Environment.staging.description == "staging")
            #expect(Environment.releaseCandidate.rawValue == "releaseCandidate", "raw values are part of cache keys")
        }
    }

    @Test("a private or function-local API's default name is the same in every process")
    func stableNamesAcrossLaunches() async throws {
        let here = ScreenLocalAPIs.all.map(\.name) + [RunwayExamples.SecondHandListAPI().name]
        #expect(here == ["RunwayExamples.ProfileBadgeAPI", "RunwayExamples.ScreenLocalAPIs.UnreadCountAPI",
                         "RunwayExamples.SecondHandListAPI"])
        // Two more launches: each process has its own addresses, so a name that carried one
        // would differ between them.
        var launches: [[String]] = []
        for _ in 0..<2 {
            let (process, output) = try startNiced(["names"])
            let text = try await offThePool {
                defer { process.waitUntilExit() }
                return String(decoding: try output.readToEnd() ?? Data(), as: UTF8.self)
            }
            #expect(process.terminationStatus == 0)
            launches.append(text.split(separator: "\n").map(String.init))
        }
        #expect(launches[0] == launches[1])
        #expect(Array(launches[0].prefix(3)) == here)
        #expect(!launches.joined().contains { $0.contains("unknown context") })
    }

    @Test("two private API types that share a default name are refused, never given one cache entry")
    func clashingPrivateNames() async throws {
        try await withHarness { harness in
            try harness.engine.register(
                Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL]))
            let mine = ClashingAPI()
            let theirs = clashingAPIFromAnotherFile()
            #expect(mine.name == "RunwayTests.ClashingAPI")
            #expect(theirs.name == mine.name)
            for api in [mine, theirs] as [any API] {
                guard case .failure(.invalidRequest(let reason)) = await harness.engine.perform(api, params: [:]) else {
                    Issue.record("\(api.path) was loaded under a name another type shares")
                    continue
                }
                #expect(reason.contains("RunwayTests.ClashingAPI"))
            }
        }
    }
}

/// A `private` API cached on disk under its default name, and one that names itself.
private struct LaunchBoundAPI: API {
    var service: ServiceID { .test }
    var path: String { "/faults/cacheable" }
    var method: HTTPRequest.Method { .get }
    var cachePolicy: CachePolicy { .memoryAndDisk(memoryLifetime: .seconds(3600), diskLifetime: .seconds(3600)) }
}

private struct SelfNamedAPI: API {
    var name: String { "Profile.SelfNamed" }
    var service: ServiceID { .test }
    var path: String { "/faults/cacheable" }
    var method: HTTPRequest.Method { .get }
    var cachePolicy: CachePolicy { .memoryAndDisk(memoryLifetime: .seconds(3600), diskLifetime: .seconds(3600)) }
}

@Suite("A private API's default name and the disk cache across launches", .timeLimit(.minutes(10)))
struct LaunchBoundNameTests {
    @Test(
        "a private type under its default name keeps its answers in memory only; one that names itself finds them after a relaunch",
        arguments: TransportKind.allCases)
    func diskOnlyUnderOwnName(_ kind: TransportKind) async throws {
        let root = try CacheRoot()
        try await withServer(kind) { transport, server in
            func launch() throws -> (Engine, ResponseCache) {
                let cache = try ResponseCache(container: Container(root: root.url))
                let engine = Engine(transport: transport, cache: cache)
                try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
                return (engine, cache)
            }
            let key = UUID().uuidString
            let (first, firstCache) = try launch()
            _ = try await first.perform(LaunchBoundAPI(), params: ["key": .string(key)]).get()
            _ = try await first.perform(SelfNamedAPI(), params: ["key": .string(key + "-named")]).get()
            await firstCache.waitForDiskWork()
            // The next launch: a new cache over the same files.
            let (second, _) = try launch()
            let unnamed = try await second.perform(LaunchBoundAPI(), params: ["key": .string(key)]).get()
            let named = try await second.perform(SelfNamedAPI(), params: ["key": .string(key + "-named")]).get()
            #expect(unnamed.origin == .network, "another launch's private type of the same name could have written it")
            guard case .cache(.disk, _, _) = named.origin else {
                Issue.record("the self-named API's answer should come from the disk tier, got \(named.origin)")
                return
            }
        }
    }
}
