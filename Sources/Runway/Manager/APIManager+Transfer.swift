import Foundation

extension APIManager {
    /// Sends `body` — bytes, a file or a multipart form, read while it is sent — with the
    /// manager's rules, and reports the bytes sent as they go.
    ///
    /// As for ``load(with:body:ignoringCache:)-(Parameters?,_,_)``: the params validator and the interceptors run,
    /// the load counts in ``isLoading``, ``cancel(_:)`` (with ``Transfer/loadID``) and
    /// ``cancelAllRequests()`` end it, and the landed response becomes ``rawResponse``. The
    /// transfer keeps its manager until it ends — an upload goes on when the screen that started
    /// it goes away, and `APIManager(PhotoAPI()).upload(…)` needs no owner. Under ``RequestStrategy/cancelInFlight`` a new upload
    /// cancels the one in flight; an upload sends its own body, so it never joins another
    /// (``RequestStrategy/ignoreNewWhileLoading`` lets it fly). The delegate is not involved: the
    /// outcome is the transfer's ``Transfer/value``. Never answered from the cache.
    ///
    /// - parameters:
    ///   - body: What to send.
    ///   - params: The params, sent in the query; `nil` asks the ``paramSource`` (or sends none).
    public func upload(_ body: RequestBody, with params: Parameters? = nil) -> Transfer<RawResponse> {
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let hooks = TransferHooks(uploadProgress: { sent, total in
            continuation.yield(TransferProgress(completed: sent, total: total))
        })
        return transfer(params: resolve(params), progress: progress, keepsResponse: true) { api, engine, params, id in
            defer { continuation.finish() }
            return await engine.perform(api, params: params, body: body, loadID: id, ignoringCache: true, hooks: hooks)
                .result
        } asResponse: { _, response in response }
    }

    /// Downloads the answer straight into a file at `destination`, with the manager's rules,
    /// reporting the bytes on disk as they arrive.
    ///
    /// Everything of ``Engine/download(_:params:to:loadID:)`` applies (resuming, the partial
    /// file), and the manager's rules as for ``upload(_:with:)``; the interceptors' response
    /// hooks see the answer's head with an empty body (the body is in the file), and
    /// ``rawResponse`` is left as it was.
    public func download(to destination: DownloadDestination, with params: Parameters? = nil) -> Transfer<DownloadedFile> {
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        return transfer(params: resolve(params), progress: progress, keepsResponse: false) { api, engine, params, id in
            defer { continuation.finish() }
            return await engine.download(api, params: params, to: destination, loadID: id) { continuation.yield($0) }
        } asResponse: { api, file in
            file.headOnly(of: api)
        }
    }

    /// Admits a transfer as a load (validator, veto, strategy, book) and flies it off the main
    /// actor; its outcome lands in the book like a load's.
    private func transfer<Value: Sendable>(
        params: Parameters, progress: AsyncStream<TransferProgress>, keepsResponse: Bool,
        run: @escaping @Sendable (Endpoint, Engine, Parameters, LoadID) async -> Result<Value, RunwayError>,
        asResponse: @escaping @Sendable (Endpoint, Value) -> RawResponse
    ) -> Transfer<Value> {
        let strategy: RequestStrategy = api.requestStrategy == .cancelInFlight ? .cancelInFlight : .allowConcurrent
        switch admitLoad(params: params, strategy: strategy, notifiesDelegate: false, waiter: nil, joinable: false) {
        case .refused(let entry, let error):
            let id = entry.context.call.loadID
            deliverLater(entry, .failure(error))
            return Transfer(loadID: id, progress: progress, task: Task { .failure(error) })
        case .joined:
            // Not under these strategies.
            let id = LoadID.next()
            return Transfer(loadID: id, progress: progress, task: Task { .failure(.cancelled) })
        case .flying(let flight):
            let id = flight.call.loadID
            let api = self.api
            let engine = self.engine
            // The task holds the manager until the transfer ends (see `upload(_:with:)`).
            let task = Task.detached(priority: Task.currentPriority) { [self] () -> Result<Value, RunwayError> in
                let result = await run(api, engine, params, id)
                let landed = await landTransfer(id, result.map { asResponse(api, $0) }, keepsResponse: keepsResponse)
                return landed ? result : .failure(.cancelled)
            }
            tasks.insert(task, for: id)
            for interceptor in flight.interceptors { interceptor.afterCall(flight.call) }
            return Transfer(loadID: id, progress: progress, task: task)
        }
    }
}
