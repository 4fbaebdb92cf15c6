import Foundation
import HTTPTypes
import NIOSSL
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// "Coming from Alamofire or Moya": each of the twelve tasks of the article, its snippet run
/// against the demo server (or, for the stubbed test, against its stub).
@Suite("The migration article's twelve tasks", .timeLimit(.minutes(10)))
@MainActor
struct MigrationArticleTests {
    /// The demo server with the article's service registered on an engine of `transport`.
    func withHouses(
        _ transport: TransportKind = .asyncHTTPClient, language: String = "zh-Hans",
        _ body: (Engine, DemoServer) async throws -> Void
    ) async throws {
        try await withHarness(transport) { harness in
            try registerHouses(engine: harness.engine, baseURL: harness.server.baseURL) { language }
            try await body(harness.engine, harness.server)
        }
    }

    @Test("1 a GET with params returns the API's type; 3 every request carries the adapter's header; 4 the token is fetched once and sent", arguments: TransportKind.allCases)
    func getHeaderAndToken(_ transport: TransportKind) async throws {
        try await withHouses(transport) { engine, server in
            let listings = try await MigrationSnippets.firstListings(engine: engine)
            #expect(listings.count == 20 && listings.allSatisfy { !$0.title.isEmpty })
            let me = try await MigrationSnippets.whoAmI(engine: engine)
            #expect(me.status == .ok)
            #expect(server.probe.count("/auth/token") == 1, "one refresh served every load")
            let posted = try await MigrationSnippets.postComment(engine: engine)
            let headers = posted.json?["headers"]
            #expect(headers?["accept-language"]?.stringValue == "zh-Hans")
            #expect(headers?["authorization"]?.stringValue == "Bearer access-1")
        }
    }

    @Test("2 an Encodable value is the POST's JSON body")
    func postEncodable() async throws {
        try await withHouses { engine, _ in
            let answer = try await MigrationSnippets.postComment(engine: engine)
            #expect(answer.json?["method"]?.stringValue == "POST")
            let body = try JSON(parsing: Data((answer.json?["body"]?.stringValue ?? "").utf8))
            #expect(body == ["listingID": 12, "text": "Nice flat"])
        }
    }

    @Test("5 503s are retried and the third attempt answers; 6 a service-wide maintenance error after the retries")
    func retryAndServiceError() async throws {
        try await withHouses { engine, server in
            let quote = try await MigrationSnippets.quote(engine: engine)
            #expect(quote.attempts == 3)
            #expect(server.probe.count("/faults/flaky/quote") == 3)
            let error = await MigrationSnippets.maintenance(engine: engine)
            guard case .service(let failure)? = error else {
                Issue.record("expected the service's maintenance error, got \(String(describing: error))")
                return
            }
            #expect(failure.kind == .maintenance && failure.message == "Back soon.")
        }
    }

    @Test("7 an upload reports progress to its end; 8 a download lands in the file", arguments: TransportKind.allCases)
    func uploadAndDownload(_ transport: TransportKind) async throws {
        let (photo, sha256) = try makeUploadFile(300_000, name: "photo.jpg")
        let (container, root) = try makeTemporaryContainer()
        defer {
            try? FileManager.default.removeItem(at: photo.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: root)
        }
        try await withHouses(transport) { engine, _ in
            let figures = TestBox<[Double]>([])
            let answer = try await MigrationSnippets.uploadPhoto(engine: engine, photo: photo) { fraction in
                figures.mutate { $0.append(fraction) }
            }
            #expect(answer.json?["sha256"]?.stringValue == sha256)
            #expect(answer.json?["contentType"]?.stringValue == "image/jpeg")
            let file = try await MigrationSnippets.downloadPlan(engine: engine, container: container)
            #expect(file.byteCount == 65_536)
            #expect(try Data(contentsOf: file.url).count == 65_536)
            #expect(file.url.path.hasSuffix("plans/1204.pdf"))
        }
    }

    @Test("9 cancel(id) ends the load once, as cancelled, and the server sees the close", arguments: TransportKind.allCases)
    func cancel(_ transport: TransportKind) async throws {
        try await withHouses(transport) { engine, server in
            struct SlowAPI: API {
                var service: ServiceID { .houses }
                var path: String { "/faults/hang" }
                var method: HTTPRequest.Method { .get }
            }
            let manager = APIManager(SlowAPI(), engine: engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let screen = ListingScreen(manager: manager)
            screen.appear()
            await server.probe.wait(for: .holdStarted)
            screen.disappear()
            await delegate.waitForEvents(1)
            #expect(delegate.events.first?.error == .cancelled)
            await server.probe.wait(for: .holdClosed)
            #expect(delegate.events.count == 1)
        }
    }

    @Test("10 a stubbed engine answers from its samples, with no server")
    func stub() async throws {
        let listings = try await MigrationSnippets.stubbedListings()
        #expect(listings.map(\.title) == ["Loft by the river"])
    }

    @Test("11 pages follow has_more to the end of the list")
    func pages() async throws {
        try await withHouses { engine, server in
            let listings = try await MigrationSnippets.allListings(engine: engine)
            #expect(listings.count == 45, "the demo catalog's 45 listings, in pages of 20")
            #expect(server.probe.count("/listings/esf") == 3)
        }
    }

    @Test("12 a pinned service loads from the server whose key it pins, and refuses another's")
    func pins() async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.pinnedServerIdentity()
        let server = try await DemoServer.start(tls: identity.tls)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            struct HealthAPI: API {
                var service: ServiceID { .houses }
                var path: String { "/health" }
                var method: HTTPRequest.Method { .get }
            }
            let pinned = Engine(transport: transport)
            try MigrationSnippets.pinnedHouses(engine: pinned, baseURL: server.baseURL, primary: identity.spkiPin)
            #expect(try await pinned.perform(HealthAPI()).get().status == .ok)

            let otherTransport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
            let other = Engine(transport: otherTransport)
            try MigrationSnippets.pinnedHouses(
                engine: other, baseURL: server.baseURL, primary: PublicKeyPins.pin(ofSPKI: Array("another key".utf8)))
            let refused = await other.perform(HealthAPI())
            try? await otherTransport.shutdown()
            guard case .failure(.pinningFailed) = refused else {
                Issue.record("a server whose key no pin names must be refused, got \(refused)")
                return
            }
        }
    }
}
