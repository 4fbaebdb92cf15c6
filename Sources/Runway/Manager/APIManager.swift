import Foundation

/// The manager of one API: what business code holds to call it and to read its data.
///
/// Everything common happens in the ``Engine``; the manager adds what is per API and per owner:
/// the params validator, interceptors, the request strategy, delivery to the weak ``delegate``
/// or to an `async` caller, and keeping the raw response for reformers. When the manager is
/// released mid-flight (its owner went away), its requests are cancelled on the wire and nothing
/// is delivered.
///
/// For example:
///
/// ```swift
/// final class ListingsViewController: APIManagerDelegate {
///     private lazy var manager: APIManager<SecondHandListAPI> = {
///         let manager = APIManager(SecondHandListAPI())
///         manager.delegate = self
///         return manager
///     }()
///
///     func refresh() { manager.loadData(with: ["city": "sh"]) }
///     // apiManagerDidSucceed / apiManagerDidFail …
/// }
///
/// // or, with async:
/// let rows = try await APIManager(SecondHandListAPI()).load(reformedBy: ListingRowsReformer())
/// ```
@MainActor
public final class APIManager<Endpoint: API>: APIManaging {
    // The load's own types are not generic: nested in this generic class, every use would look up
    // their metadata at run time, which was most of the manager's own CPU per load.
    typealias Waiter = LoadWaiter
    typealias Flight = LoadFlight

    /// The API this manager calls. Change it to call the same endpoint with other path values.
    public var api: Endpoint
    /// The engine the calls go through.
    public let engine: Engine
    /// Receives the outcome of every load started with ``loadData(with:body:ignoringCache:)``.
    public weak var delegate: (any APIManagerDelegate)?
    /// Supplies params when a load is given none.
    public weak var paramSource: (any APIManagerParamSource)?
    public private(set) var rawResponse: RawResponse?
    public private(set) var lastError: RunwayError?
    /// The latest-started load that has succeeded: what ``reformNewest(_:of:with:)`` compares to.
    private var newestSucceeded: LoadID?
    /// Successes delivered: how ``reformLastResponse(with:)`` knows ``rawResponse`` changed under it.
    private var successes = 0

    var book = LoadBook<Waiter, Flight>()
    var paging = PagingState()
    let tasks = TaskBag()

    /// Creates the manager of `api`, calling through `engine`.
    public init(_ api: Endpoint, engine: Engine = .shared) {
        self.api = api
        self.engine = engine
    }

    deinit {
        tasks.cancelAll()
    }

    public var apiName: String { api.name }
    public var isLoading: Bool { !book.isEmpty }

    /// Starts a load whose outcome goes to the ``delegate``.
    ///
    /// The outcome is always delivered later, on the main actor, never from inside this call.
    ///
    /// - parameters:
    ///   - params: The params; `nil` asks the ``paramSource`` (or sends none).
    ///   - body: The body (an `Encodable` value, bytes, a file, a form); with it, params go into
    ///     the query.
    ///   - ignoringCache: Skip the cache lookup (pull to refresh); the fresh response is still stored.
    /// - returns: The load's identifier, or `nil` when the API's strategy
    ///   (``RequestStrategy/ignoreNewWhileLoading``) let the in-flight load serve it instead.
    @discardableResult
    public func loadData(with params: Parameters? = nil, body: RequestBody? = nil, ignoringCache: Bool = false) -> LoadID? {
        begin(
            params: resolve(params), body: body, strategy: api.requestStrategy, notifiesDelegate: true, waiter: nil,
            ignoringCache: ignoringCache)
    }

    /// Loads and returns the answer as the API is usually read: shaped by its
    /// ``API/defaultReformer`` off the main actor — the raw response for an API that declares
    /// none. The delegate is not involved.
    ///
    /// Cancelling the calling task cancels the load (unless other callers wait on it too). The
    /// load runs in the calling task, off the main actor, unless others may join it
    /// (``RequestStrategy/ignoreNewWhileLoading``); the manager ends it through a
    /// ``LoadCancellation`` when a strategy or ``cancelAllRequests()`` says so.
    ///
    /// - parameters:
    ///   - params: The params; `nil` asks the ``paramSource`` (or sends none).
    ///   - body: The body (an `Encodable` value, bytes, a file, a form); with it, params go into
    ///     the query.
    ///   - ignoringCache: Skip the cache lookup (pull to refresh); the fresh response is still stored.
    /// - throws: ``RunwayError``, exactly as a delegate would receive it; a reformer's own error
    ///   becomes ``RunwayError/invalidResponse(reason:)``.
    @discardableResult
    public func load(
        with params: Parameters? = nil, body: RequestBody? = nil, ignoringCache: Bool = false
    ) async throws(RunwayError) -> Endpoint.DefaultReformer.Output {
        // The default of every API that declares none: nothing to shape.
        if Endpoint.DefaultReformer.self == RawResponseReformer.self {
            let response = try await loadResponse(with: params, body: body, ignoringCache: ignoringCache)
            if let raw = response as? Endpoint.DefaultReformer.Output { return raw }
            return try await Self.reform(response, with: api.defaultReformer)
        }
        return try await load(with: params, body: body, ignoringCache: ignoringCache, reformedBy: api.defaultReformer)
    }

    /// Loads and returns the answer shaped by `reformer` (the view's own shape, over the API's
    /// default); the delegate is not involved.
    ///
    /// The reformer runs off the main actor, in the load's own task before it comes back to
    /// land: the main actor only lands the load and hands back the finished value. The options
    /// and rules are those of ``load(with:body:ignoringCache:)``.
    ///
    /// - throws: ``RunwayError``; a reformer's own error becomes
    ///   ``RunwayError/invalidResponse(reason:)``.
    public func load<R: Reformer>(
        with params: Parameters? = nil, body: RequestBody? = nil, ignoringCache: Bool = false, reformedBy reformer: R
    ) async throws(RunwayError) -> R.Output {
        let (response, reformed) = try await loadLanded(with: params, body: body, ignoringCache: ignoringCache) {
            response throws(RunwayError) in try Self.reformNow(response, with: reformer)
        }
        if let reformed { return try reformed.get() }
        return try await Self.reform(response, with: reformer)
    }

    /// The load of ``load(with:body:ignoringCache:)``, before any reformer.
    func loadResponse(
        with params: Parameters?, body: RequestBody?, ignoringCache: Bool
    ) async throws(RunwayError) -> RawResponse {
        try await loadLanded(with: params, body: body, ignoringCache: ignoringCache, shape: Shape<Never>?.none).response
    }

    /// What a load in its caller's task makes of its response off the main actor, before it
    /// comes back to land.
    typealias Shape<Output> = @Sendable (RawResponse) throws(RunwayError) -> Output

    /// A load, landed: its response, and — for a load that ran in its caller's task — the
    /// response shaped by `shape` off the main actor before the hop back; `nil` for a load
    /// others may join (it flew in a task of its own), which its caller shapes after.
    ///
    /// The load lands (``rawResponse``, interceptors, delegate rules) whether or not `shape`
    /// succeeds; its error is the caller's alone.
    private func loadLanded<Output: Sendable>(
        with params: Parameters?, body: RequestBody?, ignoringCache: Bool, shape: Shape<Output>?
    ) async throws(RunwayError) -> (response: RawResponse, shaped: Result<Output, RunwayError>?) {
        let params = resolve(params)
        let strategy = api.requestStrategy
        guard strategy != .ignoreNewWhileLoading else {
            return (try await loadInOwnTask(params: params, body: body, strategy: strategy, ignoringCache: ignoringCache), nil)
        }
        // Nobody can join it: the load runs in its caller's task, as a plain `await` on the
        // engine would, and the manager cancels it through its handle.
        switch admitLoad(params: params, strategy: strategy, notifiesDelegate: false, waiter: nil, joinable: false) {
        case .refused(let entry, let error):
            deliver(entry, .failure(error))
            throw error
        case .joined:
            // Not under this strategy; were it to happen, the load it joined serves it.
            return (try await loadInOwnTask(params: params, body: body, strategy: strategy, ignoringCache: ignoringCache), nil)
        case .flying(let flight):
            let id = flight.call.loadID
            let cancellation = LoadCancellation()
            tasks.insert(cancellation, for: id)
            for interceptor in flight.interceptors { interceptor.afterCall(flight.call) }
            let (result, shaped) = await Self.fly(
                api, engine: engine, params: params, body: body, loadID: id, ignoringCache: ignoringCache,
                cancellation: cancellation, shape: shape)
            return (try landInCallersTask(id, result).get(), shaped)
        }
    }

    /// A load others may join: it flies in a task of its own, which its caller's cancellation
    /// ends only when nobody else waits.
    private func loadInOwnTask(
        params: Parameters, body: RequestBody?, strategy: RequestStrategy, ignoringCache: Bool
    ) async throws(RunwayError) -> RawResponse {
        let waiter = Waiter()
        begin(
            params: params, body: body, strategy: strategy, notifiesDelegate: false, waiter: waiter,
            ignoringCache: ignoringCache)
        return try await wait(for: waiter).get()
    }

    /// The last successful response shaped by `reformer`, which runs off the main actor; nothing
    /// is sent.
    ///
    /// When another load succeeds while the reformer runs, its response is reformed instead:
    /// the value returned is always of the response the manager holds when it returns, so two
    /// `Task { show(try await manager.reformLastResponse(with:)) }` never end with the older
    /// answer shown.
    ///
    /// - throws: ``RunwayError/noContent`` before any load succeeded;
    ///   ``RunwayError/invalidResponse(reason:)`` when the reformer fails.
    public func reformLastResponse<R: Reformer>(with reformer: R) async throws(RunwayError) -> R.Output {
        while true {
            guard let response = rawResponse else { throw .noContent }
            let generation = successes
            let value = try await Self.reform(response, with: reformer)
            if generation == successes { return value }
        }
    }

    public func reform<R: Reformer>(_ response: RawResponse, with reformer: R) async throws(RunwayError) -> R.Output {
        try await Self.reform(response, with: reformer)
    }

    /// `response`, which load `load` delivered, shaped by `reformer` off the main actor — or
    /// `nil` when, by the time the reform is done, a load started after it has succeeded: its
    /// value is newer, so this one must not be shown over it.
    ///
    /// Reforms run concurrently, so a plain `Task { show(try await manager.reform(…)) }` per
    /// callback can show an older answer after a newer one. With this, whatever order the
    /// reforms finish in, only values no newer load has replaced come back:
    ///
    /// ```swift
    /// func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
    ///     Task { if let rows = try await manager.reformNewest(response, of: load, with: RowsReformer()) { show(rows) } }
    /// }
    /// ```
    public func reformNewest<R: Reformer>(_ response: RawResponse, of load: LoadID, with reformer: R) async throws(RunwayError)
        -> R.Output?
    {
        let value = try await Self.reform(response, with: reformer)
        if let newest = newestSucceeded, newest.rawValue > load.rawValue { return nil }
        return value
    }

    /// Cancels one load: the one ``loadData(with:body:ignoringCache:)`` returned `id` for, or an
    /// `async` ``load(with:body:ignoringCache:)`` by the id its delegate callbacks and
    /// interceptors see.
    ///
    /// The load is delivered as ``RunwayError/cancelled`` once — to the delegate if it notifies
    /// it, to every caller awaiting it — later, on the main actor; its request is cancelled on
    /// the wire, so the server sees the connection close. Other loads go on. A load that already
    /// ended (delivered, cancelled, or never this manager's) is left alone.
    ///
    /// - returns: Whether the load was still in flight and is now cancelled.
    @discardableResult
    public func cancel(_ id: LoadID) -> Bool {
        guard let entry = book.finish(id) else { return false }
        cancelAndDeliver(id, entry)
        return true
    }

    public func cancelAllRequests() {
        for (id, entry) in book.finishAll() { cancelAndDeliver(id, entry) }
    }

    /// Cancels the task of a load already finished in the book and delivers it as cancelled.
    func cancelAndDeliver(_ id: LoadID, _ entry: LoadBook<Waiter, Flight>.Entry) {
        tasks.cancel(id)
        deliverLater(entry, .failure(.cancelled))
    }

    // MARK: - The way of one load

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
        onFinish: ((Result<RawResponse, RunwayError>) -> Void)? = nil
    ) -> LoadID? {
        let flight: Flight
        switch admitLoad(
            params: params, strategy: strategy, notifiesDelegate: notifiesDelegate, waiter: waiter, joinable: true,
            onFinish: onFinish)
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
        let task = Task.detached(priority: Task.currentPriority) { [weak self] in
            let result = await engine.perform(
                api, params: params, body: body, loadID: id, ignoringCache: ignoringCache, hooks: TransferHooks()
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
        onFinish: ((Result<RawResponse, RunwayError>) -> Void)? = nil
    ) -> LoadAdmission {
        let id = LoadID.next()
        let call = CallInfo(loadID: id, apiName: api.name, service: api.service, params: params)
        let interceptors = self.interceptors
        let flight = Flight(call: call, interceptors: interceptors, onFinish: onFinish)
        func refused(_ error: RunwayError) -> LoadAdmission {
            .refused(
                LoadBook.Entry(context: flight, notifiesDelegate: notifiesDelegate, waiters: waiter.map { [$0] } ?? []),
                error)
        }
        do {
            try api.paramsValidator.validate(params)
        } catch {
            return refused(.paramsInvalid(reason: error.reason))
        }
        for interceptor in interceptors {
            if case .veto(let reason) = interceptor.shouldCall(call) { return refused(.vetoed(reason: reason)) }
        }
        let (admission, superseded) = book.admit(
            id, context: flight, strategy: strategy, notifiesDelegate: notifiesDelegate, waiter: waiter,
            joinable: joinable)
        guard case .start = admission else { return .joined }
        for (old, oldEntry) in superseded { cancelAndDeliver(old, oldEntry) }
        return .flying(flight)
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
            api, params: params, body: body, loadID: loadID, ignoringCache: ignoringCache, hooks: TransferHooks(),
            cancellation: cancellation, trace: trace
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

    /// The outcome of a load its caller ran, back on the main actor.
    ///
    /// A caller whose task was cancelled gets ``RunwayError/cancelled`` and the load is delivered
    /// as cancelled, as for a caller that waited on a load's task; a load the manager cancelled
    /// meanwhile (superseded, all requests cancelled) was delivered as cancelled already.
    private func landInCallersTask(_ id: LoadID, _ result: Result<RawResponse, RunwayError>)
        -> Result<RawResponse, RunwayError>
    {
        guard Task.isCancelled else { return land(id, result) ? result : .failure(.cancelled) }
        tasks.remove(id)
        if let entry = book.finish(id) { deliver(entry, .failure(.cancelled)) }
        return .failure(.cancelled)
    }

    /// The engine's outcome reached the main actor.
    ///
    /// - returns: Whether it was delivered; `false` when the load had already been delivered as
    ///   cancelled (superseded, or all requests cancelled), and its outcome is dropped.
    @discardableResult
    private func land(_ id: LoadID, _ result: Result<RawResponse, RunwayError>) -> Bool {
        tasks.remove(id)
        guard let entry = book.finish(id) else { return false }
        for interceptor in entry.context.interceptors { interceptor.didReceiveResponse(entry.context.call, result: result) }
        deliver(entry, result)
        return true
    }

    /// A transfer's outcome reached the main actor: landed as ``land(_:_:)`` lands a load's;
    /// only an upload's response becomes ``rawResponse``.
    ///
    /// - returns: Whether it was delivered (not already delivered as cancelled).
    func landTransfer(_ id: LoadID, _ result: Result<RawResponse, RunwayError>, keepsResponse: Bool) -> Bool {
        tasks.remove(id)
        guard let entry = book.finish(id) else { return false }
        for interceptor in entry.context.interceptors { interceptor.didReceiveResponse(entry.context.call, result: result) }
        deliver(entry, result, keepsResponse: keepsResponse)
        return true
    }

    /// Delivers on a later turn of the main actor, so that no outcome arrives from inside the
    /// call that started the load; nothing is delivered if the manager is gone by then.
    func deliverLater(_ entry: LoadBook<Waiter, Flight>.Entry, _ result: Result<RawResponse, RunwayError>) {
        let id = LoadID.next()
        let task = Task { [weak self] in
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
        switch result {
        case .success(let response):
            if keepsResponse {
                rawResponse = response
                lastError = nil
                successes += 1
                if (newestSucceeded?.rawValue ?? 0) < call.loadID.rawValue { newestSucceeded = call.loadID }
            }
            for interceptor in interceptors { interceptor.beforePerformSuccess(call, response: response) }
            if entry.notifiesDelegate { delegate?.apiManager(self, didSucceed: response, load: call.loadID) }
            for waiter in entry.waiters { waiter.resolve(.delivered(result)) }
            for interceptor in interceptors { interceptor.afterPerformSuccess(call, response: response) }
        case .failure(let error):
            if keepsResponse { lastError = error }
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

    private func abandon(_ waiter: Waiter) {
        guard let id = book.abandon(where: { $0 === waiter }), let entry = book.finish(id) else { return }
        cancelAndDeliver(id, entry)
    }

    /// The service's interceptors, then the API's.
    var interceptors: [any Interceptor] {
        let own = api.interceptors
        let service = engine.interceptors(of: api.service)
        return own.isEmpty ? service : service + own
    }

    /// Runs `reformer` off the main actor.
    @concurrent
    nonisolated static func reform<R: Reformer>(_ response: RawResponse, with reformer: R) async throws(RunwayError)
        -> R.Output
    {
        try reformNow(response, with: reformer)
    }

    /// Runs `reformer` where the caller is; its own error becomes
    /// ``RunwayError/invalidResponse(reason:)``.
    nonisolated static func reformNow<R: Reformer>(_ response: RawResponse, with reformer: R) throws(RunwayError)
        -> R.Output
    {
        do {
            return try reformer.reform(response)
        } catch let error as RunwayError {
            throw error
        } catch {
            throw .invalidResponse(reason: "\(type(of: reformer)) could not reform the response: \(error)")
        }
    }
}
