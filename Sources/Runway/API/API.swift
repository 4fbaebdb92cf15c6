public import Foundation
public import HTTPTypes

/// The params of one call: names and JSON values.
///
/// Strings, numbers, Booleans and arrays of them go into a query or form; any ``JSON`` goes
/// into a JSON body.
public typealias Parameters = [String: JSON]

/// One API of a service: the small type business code writes per endpoint.
///
/// The compiler enforces what every API must declare — ``service``, ``path`` and ``method``.
/// Everything else has a documented default, overridden by declaring it in the conforming type.
/// There is no base class to subclass and nothing is checked at run time.
///
/// For example:
///
/// ```swift
/// struct RentalListAPI: PagedAPI {
///     var service: ServiceID { .listings }
///     var path: String { "/listings/zf" }
///     var method: HTTPRequest.Method { .get }
///     var requestStrategy: RequestStrategy { .cancelInFlight }  // filters
/// }
///
/// let manager = APIManager(RentalListAPI())
/// manager.delegate = self
/// manager.loadData(with: ["city": "sh"])
/// ```
public protocol API: Sendable {
    /// The reformer this API is usually read with: its output is what
    /// ``APIManager/load(with:body:ignoringCache:)-(Parameters?,_,_)`` returns. Default: ``RawResponseReformer``.
    associatedtype DefaultReformer: Reformer = RawResponseReformer

    /// The service this API belongs to; its base URL, common params and convention apply.
    var service: ServiceID { get }
    /// The path below the service's base URL, for example `/listings/esf`.
    var path: String { get }
    /// The HTTP method.
    var method: HTTPRequest.Method { get }

    /// A name for logs, stub lookups, cache removal and interceptors. Default: the type's
    /// module-qualified name (`ListingsKit.SearchAPI`), so two `SearchAPI` types in different
    /// modules never share one.
    var name: String { get }
    /// Where params go. Default: ``ParamEncoding/automatic``.
    var paramEncoding: ParamEncoding { get }
    /// How long one attempt may take, from sending to the body's last byte, every redirect hop
    /// included. Default: 20 seconds.
    var timeout: Duration { get }
    /// How long the whole load may take, across attempts, redirects and the waits between
    /// retries; `nil` bounds each attempt only. Default: `nil`.
    ///
    /// With the default ``timeout`` and ``retryPolicy`` a load that keeps timing out can take a
    /// minute; a total deadline caps that. A retry whose wait would end past the deadline is not
    /// made: the load fails with the last attempt's error.
    var totalTimeout: Duration? { get }
    /// Whether and how far redirects are followed. Default: ``RedirectPolicy/default``
    /// (same origin only, five hops).
    var redirectPolicy: RedirectPolicy { get }
    /// What a load does while another is in flight. Default: ``RequestStrategy/allowConcurrent``.
    var requestStrategy: RequestStrategy { get }
    /// Whether identical loads in flight at once (a `GET` or `HEAD` without a body, the same
    /// params and header fields, the same sign-in) share one request, cached or not; when the
    /// load that sent it is cancelled first, a load still waiting sends the request again. Turn
    /// it off for an endpoint whose every call must reach the server. Default `true`.
    var sharesIdenticalLoads: Bool { get }
    /// When failed attempts are retried. Default: ``RetryPolicy/default``.
    var retryPolicy: RetryPolicy { get }
    /// Header fields of this API, over the service's common headers. Default: none.
    var headers: HTTPFields { get }
    /// How the body is read at landing. Default: ``ResponseFormat/json``.
    var responseFormat: ResponseFormat { get }
    /// Checks params before anything leaves the device. Default: accepts all.
    var paramsValidator: any ParamsValidator { get }
    /// Checks a landed response after the service's convention. Default: accepts all.
    var responseValidator: any ResponseValidator { get }
    /// Interceptors of this API; they run after the service's. Default: none.
    var interceptors: [any Interceptor] { get }
    /// Adapters that change this API's requests before they leave, after the service's
    /// (``Service/adapters``). Default: none. See ``RequestAdapter``.
    var adapters: [any RequestAdapter] { get }
    /// Whether and how responses are cached (`GET` and `HEAD` only), and what goes into an
    /// entry's key: its version, the params left out, the sensitive component (a user id) and the
    /// header fields that vary the answer. Default: ``CachePolicy/none``.
    var cachePolicy: CachePolicy { get }
    /// Whether the service's credential (``Service/Credentials/authentication``) goes on this
    /// API's requests. Default: `true`; the token endpoint that refreshes the credential says
    /// `false`.
    var authenticates: Bool { get }
    /// Whether the trace context (W3C `traceparent`, from the engine's tracer) also goes on
    /// redirect hops to another origin. Default: `false` — like the credential, it goes only to
    /// the service's own origin, where it is signed with the rest of the request. Say `true` for
    /// an API whose redirects go to a host that belongs to the same system (a CDN of your own).
    var sendsTraceContextToOtherOrigins: Bool { get }
    /// Encodes the values given as ``RequestBody/json(_:)``. Default: a plain `JSONEncoder`.
    var jsonEncoder: JSONEncoder { get }
    /// The largest response body held in memory, after content decoding, in bytes; a larger
    /// one fails with ``RunwayError/invalidResponse(reason:)`` as soon as it is seen — from its
    /// `Content-Length`, or at the first chunk past the limit — and its connection is closed
    /// rather than read to the end. Downloads to a file are not bounded by it. Default: 32 MiB.
    var maximumResponseSize: Int { get }
    /// What the API's answer is usually read as, so that
    /// ``APIManager/load(with:body:ignoringCache:)-(Parameters?,_,_)`` returns the view's type without naming a
    /// reformer at every call. A view that needs another shape still passes its own reformer
    /// (``APIManager/load(with:body:ignoringCache:reformedBy:)-(Parameters?,_,_,_)``): one API, many views.
    ///
    /// For example, an API read as one `Codable` value (pair it with ``ResponseFormat/raw``, so
    /// the body is not also parsed into a tree):
    ///
    /// ```swift
    /// struct ProfileAPI: API {
    ///     var service: ServiceID { .accounts }
    ///     var path: String { "/me" }
    ///     var method: HTTPRequest.Method { .get }
    ///     var responseFormat: ResponseFormat { .raw }
    ///     var defaultReformer: DecodingReformer<Profile> { .decoding(Profile.self) }
    /// }
    ///
    /// let profile: Profile = try await APIManager(ProfileAPI()).load()
    /// ```
    ///
    /// Default: ``RawResponseReformer``, the response as it landed.
    var defaultReformer: DefaultReformer { get }
}

extension API where DefaultReformer == RawResponseReformer {
    public var defaultReformer: RawResponseReformer { RawResponseReformer() }
}

extension API {
    public var name: String { TypeName.of(Self.self) }
    public var maximumResponseSize: Int { 32 << 20 }
    public var paramEncoding: ParamEncoding { .automatic }
    public var timeout: Duration { .seconds(20) }
    public var totalTimeout: Duration? { nil }
    public var redirectPolicy: RedirectPolicy { .default }
    public var requestStrategy: RequestStrategy { .allowConcurrent }
    public var sharesIdenticalLoads: Bool { true }
    public var retryPolicy: RetryPolicy { .default }
    public var headers: HTTPFields { [:] }
    public var responseFormat: ResponseFormat { .json }
    public var paramsValidator: any ParamsValidator { AcceptAllParams() }
    public var responseValidator: any ResponseValidator { AcceptAllResponses() }
    public var interceptors: [any Interceptor] { [] }
    public var adapters: [any RequestAdapter] { [] }
    public var cachePolicy: CachePolicy { .none }
    public var authenticates: Bool { true }
    public var sendsTraceContextToOtherOrigins: Bool { false }
    public var jsonEncoder: JSONEncoder { JSONEncoder() }
}

/// Where a call's params go.
public enum ParamEncoding: Sendable, Hashable {
    /// In the query for `GET`, `HEAD` and `DELETE`; as a JSON body otherwise.
    case automatic
    /// Always in the query string.
    case query
    /// As a JSON body (`application/json`).
    case json
    /// As a form body (`application/x-www-form-urlencoded`).
    case form
}

/// How the engine reads a 2xx body at landing.
public enum ResponseFormat: Sendable, Hashable {
    /// Parse the body as JSON once, off the main actor; an empty or non-JSON body fails the load.
    case json
    /// Keep the bytes only; reformers decode exactly what they need from ``RawResponse/body``.
    /// Use it for non-JSON bodies, or where a reformer-local `Decodable` is faster than a tree.
    /// A service whose convention reads an envelope (``CodeEnvelopeConvention``) still checks
    /// it: the body is parsed for the check and the tree dropped.
    case raw
}

/// What a load does when another load of the same manager is still in flight.
public enum RequestStrategy: Sendable, Hashable {
    /// Both fly; each is delivered on its own.
    case allowConcurrent
    /// The new load is ignored and the in-flight one serves it (refreshing a page or a list):
    /// `loadData` returns `nil` and delivers nothing of its own; an `async` caller receives the
    /// in-flight load's outcome. An `async` load started under another strategy (before the
    /// API's strategy changed) runs in its caller's task and is never joined: the new load flies
    /// instead.
    case ignoreNewWhileLoading
    /// The in-flight load is cancelled and the new one flies (filters: only the latest matters).
    /// The cancelled load is delivered as ``RunwayError/cancelled``, so every load is delivered
    /// exactly once; delegates skip it with ``RunwayError/isCancellation``.
    case cancelInFlight
}
