import Foundation

extension Engine {
    /// One uncached call of `api` with `body`, like ``perform(_:params:body:loadID:ignoringCache:)``,
    /// that also reports the wait the last answer's `Retry-After` asked for: a caller that keeps
    /// work for later (the operation log) must honour it beyond the engine's own retries.
    func performUncached(
        _ api: some API, body: RequestBody?
    ) async -> (result: Result<RawResponse, RunwayError>, retryAfter: Duration?) {
        let loadID = LoadID.next()
        let started = ContinuousClock.now
        guard let registered = registeredService(api.service) else {
            let result = Result<RawResponse, RunwayError>.failure(
                .invalidRequest(reason: "no service is registered as \"\(api.service)\""))
            log(loadID, api, service: api.service, result, Attempts(), ContinuousClock.now - started)
            return (result, nil)
        }
        let service = registered.service
        let (result, attempts) = await network(api, params: [:], body: body, registered: registered) {
            response, request, attempt in
            Landing.land(response, request: request, api: api, service: service, attempts: attempt)
        }
        log(loadID, api, service: service.id, result, attempts, ContinuousClock.now - started)
        return (result, attempts.retryAfter)
    }
}
