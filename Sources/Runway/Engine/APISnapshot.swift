import Foundation
import HTTPTypes

/// An API's properties read once, as its load starts, into a concrete value the engine's code is
/// compiled for.
///
/// The engine's steps are generic over the app's API type, and Runway is compiled without it: a
/// load read the API's properties through its witnesses 25 times, and ran every step as
/// unspecialized generic code. ``Engine/perform(_:params:body:loadID:ignoringCache:)`` is
/// inlined into the app, so this value is made there, where the compiler knows the type and
/// folds its defaults; the engine's steps are specialized for this one type inside Runway. Measured:
/// about 2 µs of CPU a sequential load (`Benchmarks/README.md`). A manager's load reads its API
/// into one too, so that a load reads an API's properties the same way from either: once, as it
/// starts. (Uploads and downloads read them as they go.)
///
/// It stands in for the API everywhere but where the API's identity counts: an answer carries
/// the app's own value (``original``), and the flight key, the name check and the cache's
/// launch rule use its type (``identity(of:)``). Properties an app rarely customizes and a
/// plain load never reads (`jsonEncoder`) are forwarded to the original when asked.
@usableFromInline
struct APISnapshot: API {
    @usableFromInline let original: any API
    @usableFromInline let originalType: any API.Type
    @usableFromInline let service: ServiceID
    @usableFromInline let path: String
    @usableFromInline let method: HTTPRequest.Method
    @usableFromInline let name: String
    @usableFromInline let paramEncoding: ParamEncoding
    @usableFromInline let timeout: Duration
    @usableFromInline let totalTimeout: Duration?
    @usableFromInline let redirectPolicy: RedirectPolicy
    @usableFromInline let requestStrategy: RequestStrategy
    @usableFromInline let sharesIdenticalLoads: Bool
    @usableFromInline let retryPolicy: RetryPolicy
    @usableFromInline let headers: HTTPFields
    @usableFromInline let responseFormat: ResponseFormat
    @usableFromInline let paramsValidator: any ParamsValidator
    @usableFromInline let responseValidator: any ResponseValidator
    @usableFromInline let interceptors: [any Interceptor]
    @usableFromInline let adapters: [any RequestAdapter]
    @usableFromInline let cachePolicy: CachePolicy
    @usableFromInline let authenticates: Bool
    @usableFromInline let sendsTraceContextToOtherOrigins: Bool
    @usableFromInline let maximumResponseSize: Int

    @inlinable
    init<Endpoint: API>(_ api: Endpoint) {
        original = api
        originalType = Endpoint.self
        service = api.service
        path = api.path
        method = api.method
        name = api.name
        paramEncoding = api.paramEncoding
        timeout = api.timeout
        totalTimeout = api.totalTimeout
        redirectPolicy = api.redirectPolicy
        requestStrategy = api.requestStrategy
        sharesIdenticalLoads = api.sharesIdenticalLoads
        retryPolicy = api.retryPolicy
        headers = api.headers
        responseFormat = api.responseFormat
        paramsValidator = api.paramsValidator
        responseValidator = api.responseValidator
        interceptors = api.interceptors
        adapters = api.adapters
        cachePolicy = api.cachePolicy
        authenticates = api.authenticates
        sendsTraceContextToOtherOrigins = api.sendsTraceContextToOtherOrigins
        maximumResponseSize = api.maximumResponseSize
    }

    @usableFromInline var jsonEncoder: JSONEncoder { original.jsonEncoder }

    /// The API an answer carries: the app's own value, never the snapshot.
    static func answering(_ api: some API) -> any API {
        (api as? APISnapshot)?.original ?? api
    }

    /// The type that names `api`'s kind of load (the flight key's kind, the name check, the
    /// cache's launch rule): the app's own type, never the snapshot's.
    static func identity(of api: some API) -> any API.Type {
        (api as? APISnapshot)?.originalType ?? type(of: api)
    }
}
