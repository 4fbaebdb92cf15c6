import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// The cache key holds who asked and what varies the answer; a removal is final.
@Suite("Cache privacy and freshness", .timeLimit(.minutes(10)))
@MainActor
struct CachePrivacyTests {
    func register(_ harness: Harness, headers: HTTPFields) throws {
        try harness.engine.register(
            Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL], commonHeaders: headers))
    }

    func cachedAPI(_ path: String = "/echo/me") -> AdHocAPI {
        var api = AdHocAPI(path: path)
        api.cachePolicy = .memory()
        return api
    }

    @Test("a request carrying Authorization or Cookie is not cached without a sensitive component", arguments: ["authorization", "cookie"])
    func credentialsNotCached(_ field: String) async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            var headers = HTTPFields()
            headers[HTTPField.Name(field)!] = "user-a"
            try register(harness, headers: headers)
            _ = try await harness.engine.perform(cachedAPI(), params: [:]).get()
            // The next user on the device: their own answer, from the server.
            headers[HTTPField.Name(field)!] = "user-b"
            try register(harness, headers: headers)
            let second = try await harness.engine.perform(cachedAPI(), params: [:]).get()
            #expect(second.origin == .network)
            #expect(second.json?["headers"]?[field]?.stringValue == "user-b")
            #expect(harness.probe.count("/echo") == 2)
        }
    }

    @Test("with a sensitive component declared, credentialed answers are cached per component")
    func credentialsWithComponent() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer a"
            try register(harness, headers: headers)
            var api = cachedAPI()
            api.cachePolicy.sensitiveComponent = "user-a"
            _ = try await harness.engine.perform(api, params: [:]).get()
            let hit = try await harness.engine.perform(api, params: [:]).get()
            #expect(hit.origin != .network)
            api.cachePolicy.sensitiveComponent = "user-b"
            let other = try await harness.engine.perform(api, params: [:]).get()
            #expect(other.origin == .network)
            #expect(harness.probe.count("/echo") == 2)
        }
    }

    @Test("Accept-Language and the API's varying header fields are part of the key")
    func varyingFields() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            var headers = HTTPFields()
            headers[.acceptLanguage] = "en"
            try register(harness, headers: headers)
            var api = cachedAPI()
            api.cachePolicy.varyingHeaderFields = [HTTPField.Name("X-Currency")!]
            api.headers[HTTPField.Name("X-Currency")!] = "CNY"
            _ = try await harness.engine.perform(api, params: [:]).get()
            #expect(try await harness.engine.perform(api, params: [:]).get().origin != .network)

            headers[.acceptLanguage] = "zh-Hans"
            try register(harness, headers: headers)
            let chinese = try await harness.engine.perform(api, params: [:]).get()
            #expect(chinese.origin == .network)
            #expect(chinese.json?["headers"]?["accept-language"] == "zh-Hans")

            api.headers[HTTPField.Name("X-Currency")!] = "USD"
            let dollars = try await harness.engine.perform(api, params: [:]).get()
            #expect(dollars.origin == .network)
            #expect(harness.probe.count("/echo") == 3)
        }
    }

    @Test("a load in flight when its user's entries are removed does not store its answer")
    func removalGeneration() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            var api = cachedAPI("/faults/gate/logout")
            api.cachePolicy.sensitiveComponent = "user-a"
            let cache = try #require(harness.engine.cache)
            let engine = harness.engine
            let inFlight = Task { await engine.perform(api, params: [:]) }
            await harness.probe.wait(for: .gateWaiting)
            cache.removeEntries(sensitiveComponent: "user-a")
            harness.probe.openGate("logout")
            _ = try await inFlight.value.get()
            #expect(cache.memoryUsage.count == 0, "the answer of the logged-out user must not be kept")
            let next = try await harness.engine.perform(api, params: [:]).get()
            #expect(next.origin == .network)
            #expect(harness.probe.count("/faults/gate/logout") == 2)
        }
    }

    @Test("URLSession's own HTTP cache never answers behind Runway's", arguments: TransportKind.allCases)
    func noPlatformCache(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let api = AdHocAPI(path: "/faults/cacheable")
            let first = try await harness.engine.perform(api, params: ["key": .string(kind.rawValue)]).get()
            let second = try await harness.engine.perform(api, params: ["key": .string(kind.rawValue)]).get()
            #expect(first.payload?["count"] == 1)
            #expect(second.payload?["count"] == 2, "max-age=3600 must not let the platform answer")
        }
    }
}
