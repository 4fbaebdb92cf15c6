/// Where a page starts: a page number or a server-given cursor.
public enum PageRequest: Sendable, Hashable {
    /// A page number.
    case number(Int)
    /// An opaque cursor from the previous page.
    case cursor(String)
}

/// An API that returns a list in pages; its manager gains ``APIManager/loadFirstPage(with:)``
/// and ``APIManager/loadNextPage()`` and keeps the page bookkeeping itself.
///
/// The defaults speak the common conventions: numbered pages from 1 sent as `page` and
/// `page_size`, cursors sent as `cursor`; the end is reached when the payload says
/// `"has_more": false`, or gives no `next_cursor`, or returns fewer `items` than a page holds —
/// read from the JSON body whatever the API's ``API/responseFormat``.
public protocol PagedAPI: API {
    /// How many items a page holds. Default: 20.
    var pageSize: Int { get }
    /// The first page. Default: page number 1.
    var firstPage: PageRequest { get }
    /// The params that ask for `page`. Default: `page` + `page_size`, or `cursor` + `page_size`.
    func params(for page: PageRequest) -> Parameters
    /// The page after `page`, read from its response; `nil` when `page` was the last. Called off
    /// the main actor, in the page load's own task, before the page is delivered.
    func nextPage(after page: PageRequest, response: RawResponse) -> PageRequest?
}

extension PagedAPI {
    public var pageSize: Int { 20 }
    public var firstPage: PageRequest { .number(1) }

    public func params(for page: PageRequest) -> Parameters {
        switch page {
        case .number(let number): return ["page": .int(number), "page_size": .int(pageSize)]
        case .cursor(let cursor): return ["cursor": .string(cursor), "page_size": .int(pageSize)]
        }
    }

    public func nextPage(after page: PageRequest, response: RawResponse) -> PageRequest? {
        // A `.raw` API's body was not parsed at landing: read it here, off the main actor.
        let json = response.json ?? (response.body.isEmpty ? nil : try? JSONParser.parse(response.body))
        let payload = json.map { $0["data"] ?? $0 }
        switch page {
        case .cursor:
            guard let next = payload?["next_cursor"]?.stringValue, !next.isEmpty else { return nil }
            return .cursor(next)
        case .number(let number):
            // No page after the last number there is (an app's own first page may start high).
            guard number < .max else { return nil }
            if let hasMore = payload?["has_more"]?.boolValue { return hasMore ? .number(number + 1) : nil }
            let items = payload?["items"]?.arrayValue ?? payload?.arrayValue ?? []
            return items.count < pageSize ? nil : .number(number + 1)
        }
    }
}

/// A paged manager's bookkeeping.
struct PagingState {
    /// The page the next `loadNextPage` asks for; `nil` before the first page or after the last.
    var next: PageRequest?
    /// The last page that landed.
    var current: PageRequest?
    /// Whether the last page has landed.
    var isLastPage = false
    /// The page load in flight, so overlapping calls neither skip nor repeat a page.
    var loading: LoadID?
    /// The params of the whole listing (filters), sent with every page.
    var baseParams: Parameters = [:]
    /// Whether a first page was asked for since creation.
    var started = false
}
