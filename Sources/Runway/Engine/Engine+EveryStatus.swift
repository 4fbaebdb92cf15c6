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
        await performWatched(api, params: params, body: body, loadID: .next(), ignoringCache: false)
    }
}
