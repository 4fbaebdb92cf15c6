import HTTPTypes

extension Engine {
    /// A load for a client that reads every status itself (a generated OpenAPI client, through
    /// `RunwayOpenAPI`): the rules of ``perform(_:params:body:loadID:ignoringCache:)`` — the
    /// validator, the interceptors, the cache, coalescing, credentials, retries — and the head of
    /// the last answer, so that a status Runway reports as ``RunwayError/httpStatus(code:body:)``
    /// reaches that client as the response it was, header fields included.
    @concurrent
    package func performReadingEveryStatus<Endpoint: API>(
        _ api: Endpoint, params: Parameters, body: RequestBody?
    ) async -> (result: Result<RawResponse, RunwayError>, answer: HTTPResponse?) {
        let loadID = LoadID.next()
        if InterceptedCall.isUnwatched(api, engine: self) {
            if let refusal = InterceptedCall.validate(api, params) { return (.failure(refusal), nil) }
            let outcome = await perform(
                api, params: params, body: body, loadID: loadID, ignoringCache: false, hooks: TransferHooks())
            return (outcome.result, outcome.answer)
        }
        let (call, refusal) = await InterceptedCall.admit(api, params: params, loadID: loadID, engine: self)
        if let refusal { return (.failure(refusal), nil) }
        let outcome = await perform(
            api, params: params, body: body, loadID: loadID, ignoringCache: false, hooks: TransferHooks())
        await call.land(outcome.result)
        return (outcome.result, outcome.answer)
    }
}
