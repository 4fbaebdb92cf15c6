import RunwayTestSupport
import Foundation
import HTTPTypes
import Runway
import RunwayStorage

// The code of the article "Coming from Alamofire or Moya": each block between `// snippet:` and
// `// end-snippet` is a Swift block of the article, run against the demo server by
// `MigrationArticleTests`.

extension ServiceID {
    static let houses: ServiceID = "houses"
}

// snippet: Migrating-service
/// Every request says which language the app shows, read when it is sent.
struct AppLanguage: RequestAdapter {
    let current: @Sendable () -> String

    func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
        request.headerFields[.acceptLanguage] = current()
    }
}

/// The service's common errors, decided once for all its APIs.
struct HouseErrors: ServiceErrorHandler {
    func handle(_ error: RunwayError, context: ServiceErrorContext) async -> ServiceErrorDecision {
        switch error {
        case .httpStatus(code: 503, _) where context.attempt > 2:
            return .fail(.service(ServiceFailure(.maintenance, message: "Back soon.", cause: error)))
        default:
            return .deliver
        }
    }
}

func registerHouses(engine: Engine, baseURL: String, language: @escaping @Sendable () -> String) throws {
    var houses = Service(
        id: .houses, baseURLs: [.release: baseURL],
        credentials: .init(authentication: Authentication(SessionAuthenticator(engine: engine))))
    houses.adapters = [AppLanguage(current: language)]
    houses.errorHandler = HouseErrors()
    try engine.register(houses)
}
// end-snippet

// snippet: Migrating-refresh
/// A bearer token, renewed once for every load that finds it expired.
struct SessionAuthenticator: Authenticator {
    let engine: Engine

    func credential() async throws -> String? { nil }  // the keychain's token, if any

    func apply(_ token: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(token)"
    }

    func refresh(_ expired: String?) async throws -> String {
        let answer = try await engine.perform(SessionTokenAPI(), params: ["refresh_token": "from-the-keychain"]).get()
        guard let token = answer.json?["access_token"]?.stringValue else {
            throw RunwayError.invalidResponse(reason: "the token endpoint sent no access_token")
        }
        return token
    }
}

struct SessionTokenAPI: API {
    var service: ServiceID { .houses }
    var path: String { "/auth/token" }
    var method: HTTPRequest.Method { .post }
    var paramEncoding: ParamEncoding { .json }
    var authenticates: Bool { false }  // the token endpoint does not carry the token
}

struct MeAPI: API {
    var service: ServiceID { .houses }
    var path: String { "/auth/me" }
    var method: HTTPRequest.Method { .get }
}
// end-snippet

// snippet: Migrating-get
struct Listing: Decodable, Sendable {
    let title: String
    enum CodingKeys: String, CodingKey { case title = "esf_title" }
}

struct ListingsPage: Decodable, Sendable {
    struct Page: Decodable, Sendable { let items: [Listing] }
    let data: Page
}

struct ListingsAPI: PagedAPI {
    var service: ServiceID { .houses }
    var path: String { "/listings/esf" }
    var method: HTTPRequest.Method { .get }
    var defaultReformer: DecodingReformer<ListingsPage> { .decoding(ListingsPage.self) }
}
// end-snippet

@MainActor
enum MigrationSnippets {
    static func firstListings(engine: Engine) async throws(RunwayError) -> [Listing] {
        // snippet: Migrating-get-call
        let page = try await APIManager(ListingsAPI(), engine: engine).load(with: ["city": "sh", "page": 1])
        // end-snippet
        return page.data.items
    }

    static func postComment(engine: Engine) async throws(RunwayError) -> RawResponse {
        // snippet: Migrating-post
        struct NewComment: Encodable, Sendable {
            let listingID: Int
            let text: String
        }
        struct CommentAPI: API {
            var service: ServiceID { .houses }
            var path: String { "/echo/comments" }
            var method: HTTPRequest.Method { .post }
        }
        let answer = try await APIManager(CommentAPI(), engine: engine).load(with: NewComment(listingID: 12, text: "Nice flat"))
        // end-snippet
        return answer
    }

    static func whoAmI(engine: Engine) async throws(RunwayError) -> RawResponse {
        // snippet: Migrating-refresh-call
        let me = try await APIManager(MeAPI(), engine: engine).load()
        // end-snippet
        return me
    }

    static func quote(engine: Engine) async throws(RunwayError) -> RawResponse {
        // snippet: Migrating-retry
        struct QuoteAPI: API {
            var service: ServiceID { .houses }
            var path: String { "/faults/flaky" }
            var method: HTTPRequest.Method { .get }
            // 503s, lost connections and timeouts are retried (a 429 is delivered, with its wait),
            // idempotent methods only, with jittered backoff that honours Retry-After.
            var retryPolicy: RetryPolicy { RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(200)) }
        }
        let quote = try await APIManager(QuoteAPI(), engine: engine).load(with: ["key": "quote", "failures": 2])
        // end-snippet
        return quote
    }

    static func maintenance(engine: Engine) async -> RunwayError? {
        struct StatusAPI: API {
            var service: ServiceID { .houses }
            var path: String { "/faults/status/503" }
            var method: HTTPRequest.Method { .get }
            var retryPolicy: RetryPolicy { RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1)) }
        }
        let manager = APIManager(StatusAPI(), engine: engine)
        // snippet: Migrating-service-error
        do {
            try await manager.load()
        } catch .service(let failure) where failure.kind == .maintenance {
            return .service(failure)  // show failure.message, once, for every API of the service
        } catch {
            return error
        }
        // end-snippet
        return nil
    }

    static func uploadPhoto(
        engine: Engine, photo: URL, showProgress: @escaping @Sendable (Double) -> Void
    ) async throws(RunwayError) -> RawResponse {
        // snippet: Migrating-upload
        struct PhotoUploadAPI: API {
            var service: ServiceID { .houses }
            var path: String { "/upload/raw" }
            var method: HTTPRequest.Method { .post }
            var timeout: Duration { .seconds(120) }  // one attempt: the whole file, on a slow network
        }
        let upload = APIManager(PhotoUploadAPI(), engine: engine).upload(.file(photo, contentType: "image/jpeg"))
        Task { for await step in upload.progress { showProgress(step.fractionCompleted ?? 0) } }
        let answer = try await upload.value
        // end-snippet
        return answer
    }

    static func downloadPlan(engine: Engine, container: Container) async throws(RunwayError) -> DownloadedFile {
        // snippet: Migrating-download
        struct FloorPlanAPI: API {
            var service: ServiceID { .houses }
            var path: String { "/files/blob" }
            var method: HTTPRequest.Method { .get }
            var timeout: Duration { .seconds(120) }  // one attempt: the whole file, on a slow network
        }
        let download = APIManager(FloorPlanAPI(), engine: engine)
            .download(to: .caches("plans/1204.pdf", in: container), with: ["size": 65_536])
        let file = try await download.value  // resumed with Range if the connection drops
        // end-snippet
        return file
    }

    static func stubbedListings() async throws(RunwayError) -> [Listing] {
        // snippet: Migrating-stub
        let stub = StubTransport(sampleData: [
            ListingsAPI().name: .json(["data": ["items": [["esf_title": "Loft by the river"]]]])
        ])
        let engine = Engine(transport: stub)
        try engine.register(Service(id: .houses, baseURLs: [.release: "https://houses.example.com"]))
        let page = try await APIManager(ListingsAPI(), engine: engine).load()
        // end-snippet
        return page.data.items
    }

    static func allListings(engine: Engine) async throws(RunwayError) -> [Listing] {
        // snippet: Migrating-pages
        let manager = APIManager(ListingsAPI(), engine: engine)
        var listings: [Listing] = []
        var response: RawResponse? = try await manager.firstPage(with: ["city": "sh"])
        while let page = response {
            listings += try await manager.reform(page, with: manager.api.defaultReformer).data.items
            response = try await manager.nextPage()  // nil after the page that says has_more: false
        }
        // end-snippet
        return listings
    }

    static func pinnedHouses(engine: Engine, baseURL: String, primary: String) throws(RunwayError) {
        // snippet: Migrating-pins
        let pins = PublicKeyPins(
            host: "127.0.0.1", primary: primary,
            backups: ["q2A0pl3cRy8ce6ni2LSOD2GIj0N+nRRBF6KcgfOIPxo="])  // the next key, already made
        try engine.register(Service(id: .houses, baseURLs: [.release: baseURL], connection: .init(pins: [pins])))
        // end-snippet
    }
}

// snippet: Migrating-cancel
@MainActor
final class ListingScreen<Endpoint: API> {
    let manager: APIManager<Endpoint>
    private var load: LoadID?

    init(manager: APIManager<Endpoint>) { self.manager = manager }

    func appear() { load = manager.loadData() }

    func disappear() {
        // Delivered once, as .cancelled; the server sees the connection close.
        if let load { manager.cancel(load) }
    }
}
// end-snippet
