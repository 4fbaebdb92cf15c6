/// What a manager keeps about its loads, behind one lock: the book of loads in flight and the
/// last outcome.
///
/// It is not main-actor state so that a caller off the main actor can admit and land its own
/// load without visiting the main actor (``APIManager/load(with:body:ignoringCache:)-(Parameters?,_,_)``);
/// delegates, interceptors and joined callers are still served on the main actor.
struct LoadState {
    var book = LoadBook<LoadWaiter, LoadFlight>()
    /// The last successful response, kept until the next success.
    var rawResponse: RawResponse?
    /// The error of the last failed load, cleared by the next success.
    var lastError: RunwayError?
    /// The latest-started load that has succeeded: what ``APIManager/reformNewest(_:of:with:)`` compares to.
    var newestSucceeded: LoadID?
    /// Successes recorded: how ``APIManager/reformLastResponse(with:)`` knows ``rawResponse``
    /// changed under it.
    var successes = 0
    /// Whether a param source was set: a load without params then asks it, on the main actor.
    var hasParamSource = false

    /// Records the outcome of load `id`, delivered now.
    ///
    /// - returns: The response it replaced, for the caller to let go of after the lock: the last
    ///   reference to a parsed body is the longest thing a load frees, and under the lock every
    ///   other landing of the manager would wait for it.
    @discardableResult
    mutating func record(_ result: Result<RawResponse, RunwayError>, of id: LoadID) -> RawResponse? {
        switch result {
        case .success(let response):
            defer { rawResponse = response }
            lastError = nil
            successes += 1
            if (newestSucceeded?.rawValue ?? 0) < id.rawValue { newestSucceeded = id }
            return rawResponse
        case .failure(let error):
            lastError = error
            return nil
        }
    }
}

extension LoadBook<LoadWaiter, LoadFlight>.Entry {
    /// Whether delivering this load's outcome runs code on the main actor: a delegate,
    /// interceptors, awaiting callers, page bookkeeping. Without any, the outcome is only recorded.
    var needsMainActor: Bool {
        notifiesDelegate || !waiters.isEmpty || !context.interceptors.isEmpty || context.onFinish != nil
    }
}
