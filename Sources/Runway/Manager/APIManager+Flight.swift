import Foundation

/// The way of one load through its manager: params resolved, admitted against the loads in
/// flight, flown off the main actor, landed and delivered exactly once.
extension APIManager {
    func resolve(_ params: Parameters?) -> Parameters {
        params ?? paramSource?.params(for: self) ?? [:]
    }

    /// Validator, interceptors' veto, strategy, then the engine: the manager's half of a load.
    ///
    /// - returns: The load's identifier, or `nil` when it joined one in flight.
    @discardableResult
    func begin(
        params: Parameters, body: RequestBody? = nil, strategy: RequestStrategy, notifiesDelegate: Bool, waiter: Waiter?,
        ignoringCache: Bool = false, beforeLanding: (@Sendable (Result<RawResponse, RunwayError>) -> Void)? = nil,
        onFinish: (@MainActor (Result<RawResponse, RunwayError>) -> Void)? = nil,
        onPreview: (@MainActor (RawResponse) -> Void)? = nil
    ) -> LoadID? {
        let flight: Flight
        switch admitLoad(
            params: params, strategy: strategy, notifiesDelegate: notifiesDelegate, waiter: waiter, joinable: true,
            onFinish: onFinish, onPreview: onPreview)
        {
        case .refused(let entry, let error):
            deliverLater(entry, .failure(error))
            return entry.context.call.loadID
        case .joined:
            return nil
        case .flying(let admitted):
            flight = admitted
        }
        let id = flight.call.loadID
        let engine = self.engine
        let api = self.api
        // Started off the main actor (the engine's work never needs it). The caller that started
        // the load, while it still waits, lands it as it resumes; otherwise one hop back to land.
        // Cache then network: the stored answer reaches the main actor before the network is asked.
        let preview: (@Sendable (RawResponse) async -> Void)? =
            api.cachePolicy.cacheThenNetwork
            ? { @Sendable [weak self] (response: RawResponse) async -> Void in await self?.deliverPreview(id, response) } : nil
        let task = Task.detached(priority: Task.currentPriority) { [weak self] in
            let result = await engine.perform(
                APISnapshot(api), params: params, body: body, loadID: id, ignoringCache: ignoringCache, hooks: TransferHooks(),
                preview: preview
            ).result
            beforeLanding?(result)
            if let waiter, waiter.resolve(.land(id, result)) { return }
            await self?.land(id, result)
        }
        tasks.insert(task, for: id)
        for interceptor in flight.interceptors { interceptor.afterCall(flight.call) }
        return id
    }

    /// Validator, interceptors' veto and strategy: whether a new load flies, and which loads it
    /// supersedes (delivered as cancelled here).
    ///
    /// - parameter joinable: Whether later loads may join this one; a load that runs in its
    ///   caller's task may not.
    func admitLoad(
        params: Parameters, strategy: RequestStrategy, notifiesDelegate: Bool, waiter: Waiter?, joinable: Bool,
        onFinish: (@MainActor (Result<RawResponse, RunwayError>) -> Void)? = nil,
        onPreview: (@MainActor (RawResponse) -> Void)? = nil
    ) -> LoadAdmission {
        let id = LoadID.next()
        let call = CallInfo(loadID: id, apiName: api.name, service: api.service, params: params)
        let interceptors = self.interceptors
        let flight = Flight(call: call, interceptors: interceptors, onFinish: onFinish, onPreview: onPreview)
        func refused(_ error: RunwayError) -> LoadAdmission {
            // Never sent, yet ended: a launch's waiters must not wait out their timeout for it.
            engine.firstLoad.loadEnded()
            return .refused(
                LoadBook.Entry(context: flight, notifiesDelegate: notifiesDelegate, waiters: waiter.map { [$0] } ?? []),
                error)
        }
        if let refusal = Self.refusal(of: params, by: api) { return refused(refusal) }
        for interceptor in interceptors {
            if case .veto(let reason) = interceptor.shouldCall(call) { return refused(.vetoed(reason: reason)) }
        }
        let flies = enterBook(
            flight, strategy: strategy, notifiesDelegate: notifiesDelegate, waiter: waiter, joinable: joinable)
        return flies ? .flying(flight) : .joined
    }

    /// Why `api`'s params validator refuses `params`; `nil` when it accepts them.
    nonisolated static func refusal(of params: Parameters, by api: Endpoint) -> RunwayError? {
        do {
            try api.paramsValidator.validate(params)
            return nil
        } catch {
            return .paramsInvalid(reason: error.reason)
        }
    }

    /// Records an admitted load in the book under `strategy` and delivers the loads it
    /// supersedes as cancelled: the step of admission a caller on the main actor and one off it
    /// share.
    ///
    /// - returns: Whether the load flies; `false` when it joined the one in flight.
    nonisolated func enterBook(
        _ flight: Flight, strategy: RequestStrategy, notifiesDelegate: Bool, waiter: Waiter?, joinable: Bool
    ) -> Bool {
        let (admission, superseded) = state.withLock {
            $0.book.admit(
                flight.call.loadID, context: flight, strategy: strategy, notifiesDelegate: notifiesDelegate,
                waiter: waiter, joinable: joinable)
        }
        for (old, oldEntry) in superseded { cancelAndDeliver(old, oldEntry) }
        if case .start = admission { return true }
        return false
    }

    /// Runs a load in its caller's task, off the main actor, and shapes a successful response
    /// there too, before the hop back to land it.
    @concurrent
    nonisolated static func fly<Output: Sendable>(
        _ api: Endpoint, engine: Engine, params: Parameters, body: RequestBody?, loadID: LoadID, ignoringCache: Bool,
        cancellation: LoadCancellation, shape: Shape<Output>?
    ) async -> (Result<RawResponse, RunwayError>, Result<Output, RunwayError>?) {
        // The load's span covers the reform too, when there is one to run here.
        let trace = shape == nil ? nil : engine.startTrace(api, loadID: loadID)
        let result = await engine.perform(
            APISnapshot(api), params: params, body: body, loadID: loadID, ignoringCache: ignoringCache,
            hooks: TransferHooks(), cancellation: cancellation, trace: trace
        ).result
        guard let shape, case .success(var response) = result else {
            trace?.end(result)
            return (result, nil)
        }
        let reformTrace = trace?.child("reform")
        let started = ContinuousClock.now
        let shaped: Result<Output, RunwayError>
        do throws(RunwayError) { shaped = .success(try shape(response)) } catch { shaped = .failure(error) }
        let took = ContinuousClock.now - started
        if case .failure(let error) = shaped { reformTrace?.fail(error) }
        reformTrace?.end()
        trace?.end(result)
        response.timings[.reform] = took
        engine.recorder?.recordReform(of: loadID, took: took)
        return (.success(response), shaped)
    }

    /// The outcome of a load its caller ran, landed where the caller runs: a load whose delivery
    /// needs nothing of the main actor (no interceptors, delegate or joined callers) is only
    /// recorded, without visiting it; any other is delivered on the main actor.
    ///
    /// A caller whose task was cancelled gets ``RunwayError/cancelled`` and the load is delivered
    /// as cancelled, as for a caller that waited on a load's task; a load the manager cancelled
    /// meanwhile (superseded, all requests cancelled) was delivered as cancelled already.
    nonisolated(nonsending) func landInCallersTask(_ id: LoadID, _ result: Result<RawResponse, RunwayError>) async
        -> Result<RawResponse, RunwayError>
    {
        let cancelled = Task.isCancelled
        let outcome: Result<RawResponse, RunwayError> = cancelled ? .failure(.cancelled) : result
        tasks.remove(id)
        // Finished and, when nothing else is to be done, recorded in one step; the response it
        // replaced is let go of after the lock.
        let (entry, _) = state.withLock { state -> (LoadBook<Waiter, Flight>.Entry?, RawResponse?) in
            guard let entry = state.book.finish(id) else { return (nil, nil) }
            return (entry, entry.needsMainActor ? nil : state.record(outcome, of: id))
        }
        guard let entry else { return .failure(.cancelled) }
        if entry.needsMainActor { await deliverLanded(entry, outcome, received: !cancelled) }
        return outcome
    }

    /// Delivers a load finished in the book off the main actor; `received`: the engine's
    /// outcome, which the interceptors see arrive first (not a cancellation).
    private func deliverLanded(
        _ entry: LoadBook<Waiter, Flight>.Entry, _ result: Result<RawResponse, RunwayError>, received: Bool
    ) {
        if received {
            for interceptor in entry.context.interceptors { interceptor.didReceiveResponse(entry.context.call, result: result) }
        }
        deliver(entry, result)
    }

    /// The engine's outcome reached the main actor.
    ///
    /// - returns: Whether it was delivered; `false` when the load had already been delivered as
    ///   cancelled (superseded, or all requests cancelled), and its outcome is dropped.
    @discardableResult
    func land(_ id: LoadID, _ result: Result<RawResponse, RunwayError>) -> Bool {
        tasks.remove(id)
        guard let entry = state.withLock({ $0.book.finish(id) }) else { return false }
        deliverLanded(entry, result, received: true)
        return true
    }

    /// The stored answer of a cache-then-network load reached the main actor, ahead of the
    /// network's: delivered to the delegate as a success (``ResponseOrigin/isStale``), kept as
    /// ``rawResponse`` — unless the load already ended (cancelled, superseded), so that a stored
    /// answer never follows the network's.
    func deliverPreview(_ id: LoadID, _ response: RawResponse) {
        let entry = state.withLock { state -> (LoadBook<Waiter, Flight>.Entry, RawResponse?)? in
            guard let entry = state.book.entries[id] else { return nil }
            return (entry, state.record(.success(response), of: id))
        }?.0
        guard let entry else { return }
        entry.context.onPreview?(response)
        if entry.notifiesDelegate { delegate?.apiManager(self, didSucceed: response, load: id) }
    }

    /// A transfer's outcome reached the main actor: landed as ``land(_:_:)`` lands a load's;
    /// only an upload's response becomes ``rawResponse``.
    ///
    /// - returns: Whether it was delivered (not already delivered as cancelled).
    func landTransfer(_ id: LoadID, _ result: Result<RawResponse, RunwayError>, keepsResponse: Bool) -> Bool {
        tasks.remove(id)
        guard let entry = state.withLock({ $0.book.finish(id) }) else { return false }
        for interceptor in entry.context.interceptors { interceptor.didReceiveResponse(entry.context.call, result: result) }
        deliver(entry, result, keepsResponse: keepsResponse)
        return true
    }

    /// Delivers on a later turn of the main actor, so that no outcome arrives from inside the
    /// call that started the load; nothing is delivered if the manager is gone by then.
    nonisolated func deliverLater(_ entry: LoadBook<Waiter, Flight>.Entry, _ result: Result<RawResponse, RunwayError>) {
        let id = LoadID.next()
        let task = Task { @MainActor [weak self] in
            guard let self else { return }
            self.tasks.remove(id)
            self.deliver(entry, result)
        }
        tasks.insert(task, for: id)
    }

    /// - parameter keepsResponse: Whether the outcome becomes ``rawResponse`` or ``lastError``
    ///   (not for a download, whose body is in a file).
    func deliver(
        _ entry: LoadBook<Waiter, Flight>.Entry, _ result: Result<RawResponse, RunwayError>, keepsResponse: Bool = true
    ) {
        let call = entry.context.call
        let interceptors = entry.context.interceptors
        entry.context.onFinish?(result)
        // What the outcome replaced is let go of after the lock.
        if keepsResponse { _ = state.withLock { $0.record(result, of: call.loadID) } }
        switch result {
        case .success(let response):
            for interceptor in interceptors { interceptor.beforePerformSuccess(call, response: response) }
            if entry.notifiesDelegate { delegate?.apiManager(self, didSucceed: response, load: call.loadID) }
            for waiter in entry.waiters { waiter.resolve(.delivered(result)) }
            for interceptor in interceptors { interceptor.afterPerformSuccess(call, response: response) }
        case .failure(let error):
            for interceptor in interceptors { interceptor.beforePerformFailure(call, error: error) }
            if entry.notifiesDelegate { delegate?.apiManager(self, didFail: error, load: call.loadID) }
            for waiter in entry.waiters { waiter.resolve(.delivered(result)) }
            for interceptor in interceptors { interceptor.afterPerformFailure(call, error: error) }
        }
    }

    /// Waits for `waiter`; a cancelled caller stops waiting at once, and its load is cancelled
    /// when nobody else waits for it.
    func wait(for waiter: Waiter) async -> Result<RawResponse, RunwayError> {
        let arrival = await withTaskCancellationHandler {
            await waiter.value()
        } onCancel: {
            waiter.resolve(.delivered(.failure(.cancelled)))
            Task { @MainActor [weak self] in self?.abandon(waiter) }
        }
        switch arrival {
        case .delivered(let result):
            return result
        case .land(let id, let result):
            // Delivered to the delegate, interceptors and joined callers before this caller goes on.
            return land(id, result) ? result : .failure(.cancelled)
        }
    }

    func abandon(_ waiter: Waiter) {
        let abandoned = state.withLock { state -> (LoadID, LoadBook<Waiter, Flight>.Entry)? in
            guard let id = state.book.abandon(where: { $0 === waiter }), let entry = state.book.finish(id) else { return nil }
            return (id, entry)
        }
        guard let (id, entry) = abandoned else { return }
        cancelAndDeliver(id, entry)
    }
}
