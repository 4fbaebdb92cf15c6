import Foundation
import Runway
import RunwayExamples
import RunwayTestSupport
import Testing

@Suite("Pagination", .timeLimit(.minutes(10)))
@MainActor
struct PaginationTests {
    private func ids(_ response: RawResponse?) -> [Int] {
        (response?.payload?["items"]?.arrayValue ?? []).compactMap { $0["esf_id"]?.intValue }
    }

    @Test("pages load in order until the last, and the manager keeps the bookkeeping")
    func walksAllPages() async throws {
        try await withHarness { harness in
            let manager = APIManager(SecondHandListAPI(), engine: harness.engine)  // 45 items, 10 a page
            let first = try await manager.firstPage()
            #expect(ids(first) == Array(1...10))
            #expect(manager.currentPage == .number(1))
            var seen = ids(first)
            while let page = try await manager.nextPage() {
                seen += ids(page)
            }
            #expect(seen == Array(1...45), "no page skipped or repeated")
            #expect(manager.isLastPage)
            #expect(manager.currentPage == .number(5))
            let afterLast = try await manager.nextPage()
            #expect(afterLast == nil)
            #expect(harness.probe.count("/listings/esf") == 5)
        }
    }

    @Test("a .raw paged API on an envelope service walks every page too: the next page is read from the body, off the main actor")
    func rawPagesWalkToTheEnd() async throws {
        try await withHarness { harness in
            struct Envelope: Decodable { var data: Page }
            struct Page: Decodable { var items: [Item] }
            struct Item: Decodable { var esf_id: Int }
            let manager = APIManager(RawSecondHandListAPI(), engine: harness.engine)
            var seen: [Int] = []
            var page: RawResponse? = try await manager.firstPage()
            while let landed = page {
                #expect(landed.json == nil, "a .raw page is not parsed at landing")
                seen += try JSONDecoder().decode(Envelope.self, from: landed.body).data.items.map(\.esf_id)
                page = try await manager.nextPage()
            }
            #expect(seen == Array(1...45), "every page, in order")
            #expect(manager.isLastPage)
            #expect(manager.currentPage == .number(5))
            #expect(harness.probe.count("/listings/esf") == 5)
            // The envelope is still checked: a business error reaches a .raw API as one.
            let refused = await harness.engine.perform(RawSecondHandListAPI(), params: ["city": "atlantis"])
            guard case .failure(.business(let code, _)) = refused else {
                Issue.record("expected the envelope's business error, got \(refused)")
                return
            }
            #expect(code == 1001)
        }
    }

    @Test("overlapping loadNextPage calls neither skip nor repeat a page")
    func overlappingNextPage() async throws {
        try await withHarness { harness in
            let manager = APIManager(SecondHandListAPI(), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadFirstPage()
            await delegate.waitForEvents(1)
            #expect(manager.loadNextPage() != nil)
            #expect(manager.loadNextPage() == nil, "a page is already in flight")
            #expect(manager.loadNextPage() == nil)
            await delegate.waitForEvents(2)
            #expect(manager.loadNextPage() != nil)
            await delegate.waitForEvents(3)
            let pages = delegate.events.compactMap { event -> [Int]? in
                guard case .success(let response) = event else { return nil }
                return ids(response)
            }
            #expect(pages == [Array(1...10), Array(11...20), Array(21...30)])
            #expect(harness.probe.count("/listings/esf") == 3)
        }
    }

    @Test("a refresh resets to the first page and keeps the listing's filters on every page")
    func refreshResets() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/echo/paged")
            api.name = "Paged"
            let manager = APIManager(PagedEcho(base: api), engine: harness.engine)
            let first = try await manager.firstPage(with: ["city": "sh"])
            #expect(first.json?["query"] == "city=sh&page=1&page_size=2")
            let second = try await manager.nextPage()
            #expect(second?.json?["query"] == "city=sh&page=2&page_size=2")
            let refreshed = try await manager.firstPage(with: ["city": "bj"])
            #expect(refreshed.json?["query"] == "city=bj&page=1&page_size=2")
            #expect(manager.currentPage == .number(1))
            #expect(!manager.isLastPage)
        }
    }

    @Test("a failed page is asked for again, not skipped")
    func failedPageRetried() async throws {
        try await withHarness { harness in
            let manager = APIManager(SecondHandListAPI(), engine: harness.engine)
            try await manager.firstPage()
            try harness.engine.register(
                Service(id: .listings, environment: .develop, baseURLs: [.develop: "http://127.0.0.1:1"]))
            await #expect(throws: RunwayError.noNetwork(reason: .connectionRefused)) { try await manager.nextPage() }
            try harness.engine.register(listingService(baseURL: harness.server.baseURL))
            let second = try await manager.nextPage()
            #expect(ids(second) == Array(11...20))
        }
    }

    @Test("numbered pages: the next follows while the server says there is more, and there is none after Int.max")
    func numberedPagesEnd() throws {
        let api = CountedPages()
        func next(after number: Int, _ body: String) -> PageRequest? {
            let request = HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/pages")
            let response = RawResponse(
                api: api, request: request, response: HTTPResponse(status: .ok), body: Data(body.utf8), json: nil)
            return api.nextPage(after: .number(number), response: response)
        }
        #expect(next(after: 1, #"{"has_more":true}"#) == .number(2))
        #expect(next(after: 1, #"{"has_more":false}"#) == nil)
        #expect(next(after: 3, #"{"items":[1,2]}"#) == .number(4))
        #expect(next(after: 3, #"{"items":[1]}"#) == nil)
        #expect(next(after: .max, #"{"has_more":true}"#) == nil)
        #expect(next(after: .max, #"{"items":[1,2]}"#) == nil)
    }

    @Test("cursor pages follow the server's next_cursor")
    func cursorPages() async throws {
        let stub = StubTransport { request in
            let query = request.head.path?.split(separator: "?").last.map(String.init) ?? ""
            let next: JSON = query.contains("cursor=b") ? nil : (query.contains("cursor=a") ? "b" : "a")
            return try StubTransport.Sample.json(["data": ["items": [1], "next_cursor": next]]).response()
        }
        let engine = Engine(transport: stub)
        try engine.register(Service(id: .test, baseURLs: [.release: "https://api.example.com"]))
        let manager = APIManager(CursorAPI(), engine: engine)
        try await manager.firstPage()
        try await manager.nextPage()
        try await manager.nextPage()
        #expect(manager.isLastPage)
        #expect(stub.requests.compactMap { $0.head.path } == [
            "/cursor?cursor=start&page_size=20", "/cursor?cursor=a&page_size=20", "/cursor?cursor=b&page_size=20",
        ])
    }
}

/// Second-hand listings read as bytes: the default page rules must still find `has_more`.
struct RawSecondHandListAPI: ListingAPI {
    var keyPrefix: String { "esf" }
    var responseFormat: ResponseFormat { .raw }
}

struct PagedEcho: PagedAPI {
    var base: AdHocAPI
    var service: ServiceID { base.service }
    var path: String { base.path }
    var method: HTTPRequest.Method { base.method }
    var pageSize: Int { 2 }
    var responseFormat: ResponseFormat { .json }
    func nextPage(after page: PageRequest, response: RawResponse) -> PageRequest? {
        if case .number(let n) = page { return .number(n + 1) }
        return nil
    }
}

/// Numbered pages of two items, read by the default `nextPage(after:response:)`.
struct CountedPages: PagedAPI {
    var service: ServiceID { .test }
    var path: String { "/pages" }
    var method: HTTPRequest.Method { .get }
    var pageSize: Int { 2 }
}

struct CursorAPI: PagedAPI {
    var service: ServiceID { .test }
    var path: String { "/cursor" }
    var method: HTTPRequest.Method { .get }
    var firstPage: PageRequest { .cursor("start") }
}

import HTTPTypes
