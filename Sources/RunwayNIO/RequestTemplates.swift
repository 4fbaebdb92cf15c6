import AsyncHTTPClient
import HTTPTypes
import NIOConcurrencyHelpers
import NIOHTTP1

/// AsyncHTTPClient requests for the addresses an app calls again and again, each URL parsed
/// once: making an `HTTPClient.Request` parses its URL with Foundation and takes it apart
/// (10 µs of a load's work in the profile), though an API manager asks the same address each
/// time it loads. A template has no headers and no body; each exchange sets its own on a copy.
///
/// Only a URL without a query is kept: a query carries what changes from load to load — a
/// page, a search, a signed request's timestamp and signature, sometimes a token — so it would
/// seldom be asked again, and a token in it would outlive its load here. At most ``capacity``
/// addresses are kept; the next one starts the set afresh.
final class RequestTemplates: Sendable {
    /// What a template depends on: the method (AsyncHTTPClient's request keeps it fixed) and
    /// the URL's parts.
    private struct Key: Hashable {
        let method: HTTPRequest.Method
        let scheme: String
        let authority: String
        let path: String
    }

    /// How many addresses are kept at most.
    let capacity: Int
    private let kept = NIOLockedValueBox([Key: HTTPClient.Request]())

    init(capacity: Int = 128) {
        self.capacity = capacity
    }

    /// A request for `head`'s method and the URL of its `scheme`, `authority` and path, with no
    /// headers and no body: the kept one, or one made now (and kept, without a query).
    ///
    /// - throws: AsyncHTTPClient's error for a URL it cannot send to (never kept).
    func request(for head: HTTPRequest, scheme: String, authority: String) throws -> HTTPClient.Request {
        let key = Key(method: head.method, scheme: scheme, authority: authority, path: head.path ?? "/")
        let keeps = !key.path.utf8.contains(UInt8(ascii: "?"))
        if keeps, let template = kept.withLockedValue({ $0[key] }) { return template }
        let template = try HTTPClient.Request(
            url: AsyncHTTPClientTransport.url(scheme: scheme, authority: authority, path: key.path),
            method: HTTPMethod(rawValue: head.method.rawValue))
        guard keeps else { return template }
        kept.withLockedValue { kept in
            if kept.count >= capacity { kept.removeAll(keepingCapacity: true) }
            kept[key] = template
        }
        return template
    }

    /// How many addresses are kept now.
    var count: Int { kept.withLockedValue(\.count) }
}
