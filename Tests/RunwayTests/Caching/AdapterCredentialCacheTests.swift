import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing

/// Writes the app's current user into `Authorization`, as apps that keep their session outside
/// an ``Authenticator`` do.
struct CurrentUserAdapter: RequestAdapter {
    let user: TestBox<String>

    func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
        request.headerFields[.authorization] = "Bearer \(user.value)"
    }
}

/// Adds a trace id: nothing about who asks.
struct TraceAdapter: RequestAdapter {
    var writesCredentials: Bool { false }

    func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
        request.headerFields[HTTPField.Name("X-Trace-Id")!] = UUID().uuidString
    }
}

@Suite("An adapter that writes who asks keeps one user's cached answer from the next", .timeLimit(.minutes(10)))
struct AdapterCredentialCacheTests {
    @Test(
        "alice's profile, cached under .memory(), is not served to bob when an adapter writes the credential",
        arguments: TransportKind.allCases)
    func adapterCredential(_ kind: TransportKind) async throws {
        try await withHarness(kind, cache: try ResponseCache()) { harness in
            let user = TestBox("alice")
            var service = Service(id: "profiles", environment: .develop, baseURLs: [.develop: harness.server.baseURL])
            service.adapters = [CurrentUserAdapter(user: user)]
            try harness.engine.register(service)
            var profile = AdHocAPI(service: "profiles", path: "/echo/profile")
            profile.cachePolicy = .memory(lifetime: .seconds(3600))
            let alice = try await harness.engine.perform(profile).get()
            #expect(alice.json?["headers"]?["authorization"]?.stringValue == "Bearer alice")
            user.set("bob")
            let bob = try await harness.engine.perform(profile).get()
            #expect(bob.origin == .network, "never alice's cached answer")
            #expect(bob.json?["headers"]?["authorization"]?.stringValue == "Bearer bob")
        }
    }

    @Test("an adapter that says it writes no credential leaves the API cached as usual", arguments: TransportKind.allCases)
    func harmlessAdapter(_ kind: TransportKind) async throws {
        try await withHarness(kind, cache: try ResponseCache()) { harness in
            var service = Service(id: "traced", environment: .develop, baseURLs: [.develop: harness.server.baseURL])
            service.adapters = [TraceAdapter()]
            try harness.engine.register(service)
            var listing = AdHocAPI(service: "traced", path: "/echo/listing")
            listing.cachePolicy = .memory(lifetime: .seconds(3600))
            _ = try await harness.engine.perform(listing).get()
            let again = try await harness.engine.perform(listing).get()
            #expect(again.origin != .network)
            #expect(harness.probe.count("/echo") == 1)
        }
    }
}
