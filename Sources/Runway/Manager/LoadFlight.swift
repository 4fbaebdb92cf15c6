/// What a manager keeps about one in-flight load.
struct LoadFlight: Sendable {
    var call: CallInfo
    /// The service's interceptors, then the API's: looked up once per load.
    var interceptors: [any Interceptor]
    /// Runs when the load ends, before delivery (pagination bookkeeping).
    var onFinish: (@MainActor (Result<RawResponse, RunwayError>) -> Void)?
    /// Receives the stored answer delivered ahead of the network's (``CachePolicy/cacheThenNetwork``).
    var onPreview: (@MainActor (RawResponse) -> Void)?
}
