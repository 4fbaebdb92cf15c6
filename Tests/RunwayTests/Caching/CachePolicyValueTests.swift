import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// An API's cache is one value: the tiers and lifetimes, and the rules of its key — version,
/// params left out, the person it belongs to, the header fields that vary the answer.
@Suite("The cache policy is one value", .timeLimit(.minutes(10)))
@MainActor
struct CachePolicyValueTests {
    static let currency = HTTPField.Name("X-Currency")!

    /// `/echo/profile` as a signed-in user reads it: credentialed, so cached only under a
    /// sensitive component.
    static func profile(_ policy: CachePolicy, currency: String = "EUR") -> AdHocAPI {
        var api = AdHocAPI(path: "/echo/profile")
        api.service = "account"
        api.cachePolicy = policy
        api.headers[Self.currency] = currency
        return api
    }

    @Test("each part of the one value decides a hit or a miss on the wire", arguments: TransportKind.allCases)
    func everyPartOfTheKey(_ transport: TransportKind) async throws {
        let cache = try ResponseCache(limits: .init(memoryCountLimit: 50))
        try await withHarness(transport, cache: cache) { harness in
            try harness.engine.register(
                Service(
                    id: "account", environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(authentication: Authentication(ServiceRegistrationTests.Bearer()))))
            let policy = CachePolicy.memory(lifetime: .seconds(3600))
                .version(2)
                .ignoringParams(["ts"])
                .sensitiveComponent("user-1")
                .varying(on: [Self.currency])
            #expect(policy.tiers == .memory && policy.version == 2 && policy.ignoredParams == ["ts"])

            func load(_ api: AdHocAPI, ts: Int) async throws -> RawResponse {
                try await harness.engine.perform(api, params: ["ts": .int(ts), "page": 1]).get()
            }
            func expectWire(_ expected: Int, _ what: Comment) {
                #expect(harness.probe.count("/echo") == expected, what)
            }

            let first = try await load(Self.profile(policy), ts: 1)
            #expect(first.origin == .network)
            #expect(first.json?["headers"]?["authorization"]?.stringValue == "Bearer token-1")
            expectWire(1, "the first load goes out")

            // An ignored param does not change the key: a credentialed answer is a hit under
            // its sensitive component.
            #expect(try await load(Self.profile(policy), ts: 2).origin.isCached)
            expectWire(1, "ts is left out of the key")

            // A varying header field does change it.
            #expect(try await load(Self.profile(policy, currency: "USD"), ts: 3).origin == .network)
            expectWire(2, "X-Currency is part of the key")

            // So does the version: an entry of the older shape is not used.
            #expect(try await load(Self.profile(policy.version(3)), ts: 4).origin == .network)
            expectWire(3, "the version is part of the key")

            // And the person: another user's entry is never theirs; a logout removes the first's.
            #expect(try await load(Self.profile(policy.sensitiveComponent("user-2")), ts: 5).origin == .network)
            expectWire(4, "the sensitive component is part of the key")
            cache.removeEntries(sensitiveComponent: "user-1")
            #expect(try await load(Self.profile(policy), ts: 6).origin == .network)
            expectWire(5, "user-1's entries went with the logout")
            #expect(try await load(Self.profile(policy.sensitiveComponent("user-2")), ts: 7).origin.isCached)
            expectWire(5, "user-2's entry stayed")
        }
    }

    @Test("without a sensitive component the same credentialed API is never cached")
    func credentialWithoutComponent() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            try harness.engine.register(
                Service(
                    id: "account", environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(authentication: Authentication(ServiceRegistrationTests.Bearer()))))
            let api = Self.profile(.memory(lifetime: .seconds(3600)).ignoringParams(["ts"]))
            for ts in 1...2 {
                #expect(try await harness.engine.perform(api, params: ["ts": .int(ts)]).get().origin == .network)
            }
            #expect(harness.probe.count("/echo") == 2)
        }
    }
}
