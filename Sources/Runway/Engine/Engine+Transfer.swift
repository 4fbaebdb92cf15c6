import Foundation
import HTTPTypes

extension Engine {
    /// Sends `body` — a file or a multipart form, read while it is sent — and reports the bytes
    /// sent as they go.
    ///
    /// Everything of ``perform(_:params:body:loadID:ignoringCache:)-(_,Parameters,_,_,_)`` applies: the service's
    /// credential, signing (a file body is hashed once, chunk by chunk, for the signer), the
    /// API's timeout over the whole exchange, redirects, retries (each reads the files again)
    /// and landing, the params validator and the interceptors. Never answered from the cache.
    ///
    /// - returns: The transfer; its ``Transfer/value`` is the landed response.
    public func upload<Endpoint: API>(
        _ api: Endpoint, params: Parameters = [:], body: RequestBody, loadID: LoadID? = nil
    ) -> Transfer<RawResponse> {
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let hooks = TransferHooks(uploadProgress: { sent, total in
            continuation.yield(TransferProgress(completed: sent, total: total))
        })
        let loadID = loadID ?? .next()
        let task = Task { [self] () -> Result<RawResponse, RunwayError> in
            defer { continuation.finish() }
            let (call, refusal) = await InterceptedCall.admit(api, params: params, loadID: loadID, engine: self)
            if let refusal { return refused(refusal) }
            let result = await perform(api, params: params, body: body, loadID: loadID, ignoringCache: true, hooks: hooks)
                .result
            await call.land(result)
            return result
        }
        return Transfer(loadID: loadID, progress: progress, task: task)
    }

    /// Downloads the answer of `api` straight into a file at `destination`, never holding it in
    /// memory, and reports the bytes on disk as they arrive.
    ///
    /// The body goes to `<destination>.part`; when the answer is complete that file becomes the
    /// destination (replacing an older one). A download cut short — a lost connection, a
    /// timeout, a cancellation, the app quitting — leaves the partial file, and the next attempt
    /// (a retry of the API's policy, or a later call with the same destination) asks the server
    /// for the rest with `Range` and `If-Range` (when the first answer had a strong `ETag`); a
    /// server that ignores ranges, or whose file changed, sends it whole again, and a 206 that is
    /// not the rest of the same file (another `ETag`, another start, a length or bytes outside its
    /// `Content-Range`) makes the download start again instead of splicing two answers. The
    /// partial file is readable by this user only.
    /// The API's timeout covers each whole attempt, so give a large download an API with a
    /// timeout to match.
    ///
    /// The params validator and the interceptors run as for
    /// ``perform(_:params:body:loadID:ignoringCache:)-(_,Parameters,_,_,_)``; the response hooks see the answer's head
    /// with an empty body (the body is in the file).
    ///
    /// - returns: The transfer; its ``Transfer/value`` is the file, or
    ///   ``RunwayError/httpStatus(code:body:)`` (with the first 64 KB of the body) for an answer
    ///   outside 2xx.
    public func download<Endpoint: API>(
        _ api: Endpoint, params: Parameters = [:], to destination: DownloadDestination, loadID: LoadID? = nil
    ) -> Transfer<DownloadedFile> {
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let loadID = loadID ?? .next()
        let task = Task { [self] () -> Result<DownloadedFile, RunwayError> in
            defer { continuation.finish() }
            let (call, refusal) = await InterceptedCall.admit(api, params: params, loadID: loadID, engine: self)
            if let refusal { return refused(refusal) }
            let result = await download(api, params: params, to: destination, loadID: loadID) { continuation.yield($0) }
            await call.land(result.map { $0.headOnly(of: api) })
            return result
        }
        return Transfer(loadID: loadID, progress: progress, task: task)
    }

    /// One download, its params and interceptors' admission done.
    func download<Endpoint: API>(
        _ api: Endpoint, params: Parameters, to destination: DownloadDestination, loadID: LoadID,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async -> Result<DownloadedFile, RunwayError> {
        let started = ContinuousClock.now
        defer { firstLoad.loadEnded() }
        guard let registered = registeredService(api.service) else {
            let error = RunwayError.invalidRequest(reason: "no service is registered as \"\(api.service)\"")
            let failure = Result<DownloadedFile, RunwayError>.failure(error)
            log(loadID, api, service: api.service, failure, Attempts(), started: started)
            return failure
        }
        let file: URL
        do throws(RunwayError) {
            // Its folders are made as blocking work, as is every step on the disk between exchanges.
            file = try await BlockingWork.run { () throws(RunwayError) in try destination.url() }
        } catch {
            let failure = Result<DownloadedFile, RunwayError>.failure(error)
            log(loadID, api, service: api.service, failure, Attempts(), started: started)
            return failure
        }
        let sink = DownloadSink(destination: file, logger: logger, progress: progress)
        defer { sink.close() }
        let hooks = TransferHooks(sink: sink, prepare: { request in await sink.prepare(&request) })
        var outcome: (Result<DownloadedFile, RunwayError>, Attempts)
        outcome = await runAttempts(api, params: params, registered: registered, hooks: hooks, loadID: loadID) { response, request, _ in
            sink.landed(response, request: request)
        }
        // The partial file is not part of what the server has now: start again, once.
        if sink.mustStartOver(after: outcome.0) {
            await sink.discardPartial()
            outcome = await runAttempts(api, params: params, registered: registered, hooks: hooks, loadID: loadID) { response, request, _ in
                sink.landed(response, request: request)
            }
        }
        // Moved once the exchanges are over: a disk that refuses the move is not a reason to ask
        // the server again.
        if case .success(let landed) = outcome.0 {
            outcome.0 = await sink.moveIntoPlace(landed)
        }
        var attempts = outcome.1
        attempts.bytes = sink.bytesReceived
        log(loadID, api, service: api.service, outcome.0, attempts, started: started)
        return outcome.0
    }
}
