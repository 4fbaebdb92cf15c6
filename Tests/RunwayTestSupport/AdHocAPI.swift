import HTTPTypes
import Runway

extension ServiceID {
    /// The service of the tests' ``AdHocAPI``s.
    public static let test: ServiceID = "test"
}

/// An API made on the spot: every policy is a stored property, so each test — and each chapter
/// of the demo — states exactly what it needs.
public struct AdHocAPI: API {
    public var service: ServiceID
    public var path: String
    public var method: HTTPRequest.Method
    public var name: String
    public var paramEncoding: ParamEncoding
    /// Far above what any machine needs by default: tests whose subject is a deadline set their own.
    public var timeout: Duration
    public var totalTimeout: Duration?
    public var redirectPolicy: RedirectPolicy
    public var requestStrategy: RequestStrategy
    public var retryPolicy: RetryPolicy
    public var headers: HTTPFields
    public var responseFormat: ResponseFormat
    public var paramsValidator: any ParamsValidator
    public var responseValidator: any ResponseValidator
    public var interceptors: [any Interceptor]
    public var adapters: [any RequestAdapter]
    public var cachePolicy: CachePolicy
    public var maximumResponseSize: Int
    public var sendsTraceContextToOtherOrigins: Bool
    public var sharesIdenticalLoads = true

    public init(
        service: ServiceID = .test, path: String, method: HTTPRequest.Method = .get, name: String = "AdHocAPI",
        paramEncoding: ParamEncoding = .automatic, timeout: Duration = .seconds(300), totalTimeout: Duration? = nil,
        redirectPolicy: RedirectPolicy = .default, requestStrategy: RequestStrategy = .allowConcurrent,
        retryPolicy: RetryPolicy = .never, headers: HTTPFields = [:], responseFormat: ResponseFormat = .json,
        paramsValidator: any ParamsValidator = AcceptAllParams(),
        responseValidator: any ResponseValidator = AcceptAllResponses(), interceptors: [any Interceptor] = [],
        adapters: [any RequestAdapter] = [], cachePolicy: CachePolicy = .none, maximumResponseSize: Int = 32 << 20,
        sendsTraceContextToOtherOrigins: Bool = false
    ) {
        self.service = service
        self.path = path
        self.method = method
        self.name = name
        self.paramEncoding = paramEncoding
        self.timeout = timeout
        self.totalTimeout = totalTimeout
        self.redirectPolicy = redirectPolicy
        self.requestStrategy = requestStrategy
        self.retryPolicy = retryPolicy
        self.headers = headers
        self.responseFormat = responseFormat
        self.paramsValidator = paramsValidator
        self.responseValidator = responseValidator
        self.interceptors = interceptors
        self.adapters = adapters
        self.cachePolicy = cachePolicy
        self.maximumResponseSize = maximumResponseSize
        self.sendsTraceContextToOtherOrigins = sendsTraceContextToOtherOrigins
    }
}

extension AdHocAPI {
    /// An API of `service` at `path`, every other policy the default.
    public init(path: String, service: ServiceID, method: HTTPRequest.Method = .get) {
        self.init(service: service, path: path, method: method)
    }
}
