import RunwayTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayExamples
import RunwayLinks
import RunwayServer
import RunwayStorage

// The code of the DocC articles. Each block between `// snippet: NAME` and `// end-snippet`
// appears verbatim (less its indentation) in an article; `DocumentationTests` checks that every
// Swift block of every article is one of these, and runs them against the demo server.

// snippet: DeclaringAPIs-api
struct HouseSearchAPI: PagedAPI {
    var service: ServiceID { .listings }
    var path: String { "/listings/esf" }
    var method: HTTPRequest.Method { .get }

    var pageSize: Int { 10 }
    var paramsValidator: any ParamsValidator { RequiredParams.required("city") }
    var retryPolicy: RetryPolicy { RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(200)) }
    var cachePolicy: CachePolicy { .memory(lifetime: .seconds(60)) }
}
// end-snippet

// snippet: Caching-server
struct FreshListingsAPI: API {
    var service: ServiceID { .listings }
    var path: String { "/listings/xf" }
    var method: HTTPRequest.Method { .get }
    // The server's lifetimes, an hour at most; the stored answer first, then the network's.
    var cachePolicy: CachePolicy { CachePolicy.followingServer(ceiling: .seconds(3_600)).cacheThenNetwork() }
}

@MainActor
func showListings(_ manager: APIManager<FreshListingsAPI>, render: (RawResponse) -> Void) async throws {
    for await update in manager.updates(with: ["city": "sh"]) { render(try update.get()) }
}
// end-snippet

enum ArticleSnippets {
    static func registerListings(engine: Engine, developURL: String, secret: SymmetricKey) throws {
        // snippet: DeclaringAPIs-service
        try engine.register(
            Service(
                id: .listings,
                environment: .develop,
                baseURLs: [.develop: developURL, .release: "https://listings.example.com"],
                commonParams: ["client": "ios"],
                convention: .codeEnvelope(),
                credentials: .init(signer: HMACSigner(keyID: "app-2026", secret: secret))))
        // end-snippet
    }

    @MainActor
    static func loadTags(engine: Engine) async throws -> [String] {
        // snippet: Delivery-async
        let manager = APIManager(HouseSearchAPI(), engine: engine)
        let tags = try await manager.load(with: ["city": "sh"], reformedBy: PriceTagsReformer())
        // end-snippet
        return tags
    }

    @MainActor
    static func tagsAndTitles(engine: Engine) async throws -> ([String], [String]) {
        // snippet: Reformers-use
        let manager = APIManager(HouseSearchAPI(), engine: engine)
        let response = try await manager.firstPage(with: ["city": "sh"])
        let tags = try await manager.reform(response, with: PriceTagsReformer())  // the list view
        let titles = try await manager.reform(response, with: TitlesReformer())  // the map's callouts
        // end-snippet
        return (tags, titles)
    }

    static func makeCachingEngine(root: URL) throws -> (Engine, ResponseCache, MemoryPressureMonitor) {
        // snippet: Caching-engine
        let cache = try ResponseCache(container: Container(root: root))
        let engine = Engine(transport: URLSessionTransport(), cache: cache)
        let pressure = MemoryPressureMonitor { cache.purge() }
        // end-snippet
        return (engine, cache, pressure)
    }

    static func signingParts(secret: SymmetricKey) -> (HMACSigner, Service, SignatureVerifier<ServerRequestContext>) {
        // snippet: Signing-client
        let signer = HMACSigner(keyID: "app-2026", secret: secret)
        let pins = PublicKeyPins(
            host: "listings.example.com",
            primary: "Z9p8FJv4+QvZG2LGj6ZhpeD7QF0pp3C5yj+Tl1xWJUg=",
            backups: ["q2A0pl3cRy8ce6ni2LSOD2GIj0N+nRRBF6KcgfOIPxo="])
        let listings = Service(
            id: .listings, baseURLs: [.release: "https://listings.example.com"],
            credentials: .init(signer: signer), connection: .init(pins: [pins]))
        // end-snippet
        // snippet: Signing-server
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["app-2026": [secret]])
        // end-snippet
        return (signer, listings, verifier)
    }

    static func recentSearches(root: URL) throws -> ([String], StorageReport) {
        // snippet: Storage-versioned
        let container = Container(root: root)
        let format = FileFormat(name: "recent-searches", version: 2, migrations: [
            // Version 1 kept one search per line; version 2 is a JSON array.
            1: { v1 in try JSONEncoder().encode(String(decoding: v1, as: UTF8.self).split(separator: "\n").map(String.init)) },
        ])
        let file = VersionedFile(url: try container.url(for: "recent-searches.json", in: .applicationSupport), format: format)
        try file.write(["loft", "garden"])
        let searches = try file.read([String].self)
        let report = StorageReport(container: container)
        // end-snippet
        return (searches, report)
    }

    static func listingLinks(opened: @escaping @Sendable (String) -> Void) -> RoutingOutcome {
        // snippet: Links-router
        var router = URLRouter(declarations: [URLSchemeDeclaration(name: "com.acme.houses", schemes: ["houses"])])
        let pattern = RoutePattern(
            scheme: "houses", host: "listing", query: .items(["id": .integer(1...999_999)], required: ["id"]))
        router.add("open-listing", pattern) { match in
            guard let id = match["id"]?.integer else { return .notHandled }
            opened("esf_\(id)")
            return .handled
        }
        let outcome = router.route("houses://listing?id=12")
        // end-snippet
        return outcome
    }

    static func operationLog(engine: Engine, collectorURL: String, root: URL) async throws -> OperationLog {
        // snippet: OperationLogs-record
        try engine.register(Service(id: "oplog", baseURLs: [.release: collectorURL]))
        // Opens its SQLite file off the caller's actor (`OperationLog(engine:…)` opens it in place).
        let log = try await OperationLog.open(engine: engine, service: "oplog", container: Container(root: root))
        try log.record("listing.tap", payload: ["position": 3])
        // The app goes to the background: send what is waiting, in one burst.
        try await log.flush()
        // end-snippet
        return log
    }

    static func edgeService(engine: Engine, port: Int) throws -> EndpointSelector {
        // snippet: Endpoints-selector
        let selector = EndpointSelector(host: "api.runway.test", port: port, candidates: ["127.0.0.1", "::1"], scheme: "http")
        try engine.register(
            Service(
                id: "edge", baseURLs: [.release: "http://api.runway.test:\(port)"],
                connection: .init(allowsInsecureHTTP: true, endpoints: selector)))
        // end-snippet
        return selector
    }

    static func offlineEngine(transport: any Transport) -> (Engine, NetworkMonitor) {
        // snippet: Endpoints-network
        let network = NetworkMonitor.system()
        let engine = Engine(transport: transport, network: network)
        // end-snippet
        return (engine, network)
    }
}

// snippet: Delivery-delegate
@MainActor
final class HouseListController: APIManagerDelegate {
    private(set) var tags: [String] = []
    private(set) var banner: String?
    private lazy var manager: APIManager<HouseSearchAPI> = {
        let manager = APIManager(HouseSearchAPI(), engine: engine)
        manager.delegate = self
        return manager
    }()
    private let engine: Engine

    init(engine: Engine) { self.engine = engine }

    func refresh() { manager.loadFirstPage(with: ["city": "sh"]) }
    func loadMore() { manager.loadNextPage() }

    func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
        Task { tags += (try? await manager.reform(response, with: PriceTagsReformer())) ?? [] }
    }

    func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
        guard !error.isCancellation else { return }
        banner = error.localizedMessage()
    }
}
// end-snippet

// snippet: Delivery-strategy
struct RentalFilterAPI: PagedAPI {
    var service: ServiceID { .listings }
    var path: String { "/listings/zf" }
    var method: HTTPRequest.Method { .get }
    // A new filter makes the load in flight pointless: cancel it on the wire.
    var requestStrategy: RequestStrategy { .cancelInFlight }
}
// end-snippet

// snippet: Reformers-reformer
struct PriceTagsReformer: Reformer {
    func reform(_ response: RawResponse) throws -> [String] {
        guard let items = response.payload?["items"]?.arrayValue else {
            throw ValidationFailure("the listing has no items")
        }
        return items.compactMap { $0["esf_price"]?.intValue }.map { "¥\($0)" }
    }
}

struct TitlesReformer: Reformer {
    func reform(_ response: RawResponse) throws -> [String] {
        (response.payload?["items"]?.arrayValue ?? []).compactMap { $0["esf_title"]?.stringValue }
    }
}
// end-snippet

// snippet: Caching-api
struct CityGuideAPI: API {
    var service: ServiceID { .listings }
    var path: String { "/listings/xf" }
    var method: HTTPRequest.Method { .get }
    var cachePolicy: CachePolicy {
        .memoryAndDisk(memoryLifetime: .seconds(300), diskLifetime: .seconds(86_400), staleIfOffline: true)
            .ignoringParams(["ts"])  // a timestamp does not change the answer: not in the key
    }
}
// end-snippet
