public import Runway

/// How Runway loads one operation of a generated client: what an `API` type says for a
/// hand-written API, set by `operationID` on ``RunwayClientTransport`` so that the generated code
/// stays as generated.
///
/// The defaults are an `API`'s: 20 s per try, `RetryPolicy/default`, no cache, concurrent
/// loads allowed, identical `GET`s in flight shared, the service's credential sent.
public struct OperationPolicy: Sendable {
    /// Whether and how the answers are cached (`API/cachePolicy`).
    public var cachePolicy: CachePolicy
    /// What is tried again, how often and after how long (`API/retryPolicy`).
    public var retryPolicy: RetryPolicy
    /// The deadline of each try (`API/timeout`).
    public var timeout: Duration
    /// The deadline of the whole load, retries included (`API/totalTimeout`).
    public var totalTimeout: Duration?
    /// What a new call does while one of the same operation is in flight
    /// (`API/requestStrategy`): `RequestStrategy/cancelInFlight` cancels the earlier one
    /// (its caller gets a `ClientError` around `RunwayError/cancelled`);
    /// `RequestStrategy/ignoreNewWhileLoading` hands the new caller the earlier one's answer
    /// (a caller that leaves stops waiting; the load is cancelled when nobody waits).
    public var requestStrategy: RequestStrategy
    /// Whether identical `GET`s in flight share one request (`API/sharesIdenticalLoads`).
    public var sharesIdenticalLoads: Bool
    /// Whether the service's credential goes with the request (`API/authenticates`): `false`
    /// for the operations that sign in.
    public var authenticates: Bool
    /// The largest answer taken, in bytes (`API/maximumResponseSize`).
    public var maximumResponseSize: Int
    /// Interceptors of this operation, after the service's (`API/interceptors`).
    public var interceptors: [any Interceptor]
    /// Request adapters of this operation, after the service's (`API/adapters`).
    public var adapters: [any RequestAdapter]

    /// A policy; every value defaults to an `API`'s.
    public init(
        cachePolicy: CachePolicy = .none, retryPolicy: RetryPolicy = .default, timeout: Duration = .seconds(20),
        totalTimeout: Duration? = nil, requestStrategy: RequestStrategy = .allowConcurrent,
        sharesIdenticalLoads: Bool = true, authenticates: Bool = true, maximumResponseSize: Int = 32 << 20,
        interceptors: [any Interceptor] = [], adapters: [any RequestAdapter] = []
    ) {
        self.cachePolicy = cachePolicy
        self.retryPolicy = retryPolicy
        self.timeout = timeout
        self.totalTimeout = totalTimeout
        self.requestStrategy = requestStrategy
        self.sharesIdenticalLoads = sharesIdenticalLoads
        self.authenticates = authenticates
        self.maximumResponseSize = maximumResponseSize
        self.interceptors = interceptors
        self.adapters = adapters
    }
}
