import RunwayTestSupport
import Foundation
import HTTPTypes
import Runway
import RunwayDemoClient
import RunwayExamples
import RunwayOpenAPI
import RunwayStorage

// The README's quickstart. Each block between `// snippet: NAME` and `// end-snippet` appears
// verbatim (less its indentation) in README.md; `DocumentationTests` checks that every Swift
// block of the README is one of these, and runs them against the demo server.

enum ReadmeSnippets {
    /// The engine of the quickstart, its cache in `container`, its service at `developURL`.
    static func makeEngine(container: Container, developURL: String) async throws -> Engine {
        // snippet: Readme-engine
        // 1. One engine for the app: a transport, a cache (its disk tier opens in the background), a service.
        let cache = ResponseCache(openingInBackground: container)
        let engine = Engine(transport: URLSessionTransport(), cache: cache)
        try engine.register(
            Service(
                id: .listings,
                environment: .develop,
                baseURLs: [.develop: developURL, .release: "https://api.example.com"],
                commonParams: ["app_version": "5.1"],
                convention: .codeEnvelope()))  // {"code":0,"data":…} or {"code":1001,"message":"…"}
        // end-snippet
        return engine
    }

    /// The outbox of the README: one order, kept until the server has it.
    static func placeOrder(engine: Engine, container: Container, authentication: Authentication) async throws -> Int? {
        // snippet: Readme-outbox
        // Open it at launch, before the app can sign out. The order is on disk when enqueue returns;
        // it is sent in its queue's turn with its Idempotency-Key, again after a kill if need be.
        let outbox = try await Outbox.open(engine: engine, container: container, authentication: authentication)
        let order = try await outbox.enqueue(PlaceOrderAPI(), params: ["listing": 42], queue: "cart")
        for await update in outbox.updates() where update.item.id == order.id {
            if case .done(let answer) = update.state { return answer.status.code }
            if case .failed(let error) = update.state { throw error }
        }
        // end-snippet
        return nil
    }

    /// The generated client of the README: rentals through the quickstart's engine and service.
    static func listRentals(engine: Engine) async throws -> Int {
        // snippet: Readme-openapi
        // Each operation is a load of the service, named by its operationID; policies stay out of generated code.
        let transport = RunwayClientTransport(
            engine: engine, service: .listings,
            policies: ["listListings": OperationPolicy(cachePolicy: .memory(lifetime: .seconds(600)))])
        let client = Client(serverURL: try Servers.Server1.url(), transport: transport)
        let rentals = try await client.listListings(path: .init(kind: .zf)).ok.body.json.data?.items ?? []
        // end-snippet
        return rentals.count
    }

    @MainActor
    static func loadTitles(engine: Engine) async throws -> [String] {
        // snippet: Readme-async
        // 4a. Load with async/await, from the main actor …
        let manager = APIManager(RentalsAPI(), engine: engine)
        let titles = try await manager.load(with: ["city": "sh"], reformedBy: RentalTitles())
        // end-snippet
        return titles
    }
}

// snippet: Readme-types
// 2. One small type per API: the compiler insists on service, path and method; the rest has defaults.
struct RentalsAPI: PagedAPI {
    var service: ServiceID { .listings }
    var path: String { "/listings/zf" }
    var method: HTTPRequest.Method { .get }
    var requestStrategy: RequestStrategy { .cancelInFlight }  // filters: only the latest matters
    var paramsValidator: any ParamsValidator { .required("city") }
    var cachePolicy: CachePolicy { .memory(lifetime: .seconds(60)) }
}

// 3. A reformer: the raw response → exactly what one view needs.
struct RentalTitles: Reformer {
    func reform(_ response: RawResponse) throws -> [String] {
        (response.payload?["items"]?.arrayValue ?? []).compactMap { $0["zf_title"]?.stringValue }
    }
}
// end-snippet

// snippet: Readme-delegate
// 4b. … or the delegate way: one success and one failure callback, on the main actor.
final class RentalsViewController: APIManagerDelegate {
    private(set) var titles: [String] = []
    private(set) var banner: String?
    private let engine: Engine
    private lazy var rentals: APIManager<RentalsAPI> = {
        let manager = APIManager(RentalsAPI(), engine: engine)
        manager.delegate = self
        return manager
    }()

    init(engine: Engine) { self.engine = engine }

    func refresh() { rentals.loadFirstPage(with: ["city": "sh"]) }
    func loadMore() { rentals.loadNextPage() }  // page bookkeeping lives in the manager

    func apiManagerDidSucceed(_ manager: any APIManaging) {
        Task { titles = try await manager.reformLastResponse(with: RentalTitles()) }
    }

    func apiManagerDidFail(_ manager: any APIManaging, error: RunwayError) {
        guard !error.isCancellation else { return }
        banner = error.localizedMessage(language: "zh-Hans")
    }
}
// end-snippet

/// The order API of the README's outbox snippet.
struct PlaceOrderAPI: API {
    var service: ServiceID { "orders" }
    var path: String { "/orders" }
    var method: HTTPRequest.Method { .post }
    var paramEncoding: ParamEncoding { .json }
}
