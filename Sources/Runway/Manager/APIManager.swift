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
    public var api: Endpoint {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
    /// The engine the calls go through.
    public let engine: Engine
    /// Receives the outcome of every load started with ``loadData(with:body:ignoringCache:)-(Parameters?,_,_)``.
    public weak var delegate: (any APIManagerDelegate)?
    /// Supplies params when a load is given none.
    public weak var paramSource: (any APIManagerParamSource)? {
        didSet {
            let isSet = paramSource != nil
            state.withLock { $0.hasParamSource = isSet }
        }
    }
    /// The last successful response, kept until the next success.
    ///
    /// A load awaited off the main actor may land without it (see
    /// ``load(with:body:ignoringCache:)-(Parameters?,_,_)``) and change this at any moment: in a
    /// delegate callback, read the response the callback carries.
    public var rawResponse: RawResponse? { state.withLock { $0.rawResponse } }
    /// The error of the last failed load, cleared by the next success; like ``rawResponse``, a
    /// load landed off the main actor changes it.
    public var lastError: RunwayError? { state.withLock { $0.lastError } }

    /// ``api`` where a caller off the main actor reads it too.
    let current: Locked<Endpoint>
    /// The loads in flight and the last outcome, where a caller off the main actor admits and
    /// lands its own load.
    let state = Locked(LoadState())
    var paging = PagingState()
    let tasks = TaskBag()

    /// Creates the manager of `api`, calling through `engine`.
    public init(_ api: Endpoint, engine: Engine = .shared) {
        current = Locked(api)
        self.engine = engine
    }

    deinit {
        tasks.cancelAll()
    }

    public var apiName: String { api.name }
    public var isLoading: Bool { state.withLock { !$0.book.isEmpty } }

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
    /// Called from a task off the main actor, a load that needs nothing of the main actor — no
    /// interceptors, params given or no ``paramSource`` to ask, a strategy other than
    /// ``RequestStrategy/ignoreNewWhileLoading`` — never visits it: it is admitted, sent and
    /// landed (``rawResponse``, ``lastError``) where its caller runs, as a plain `await` on the
    /// engine would be. Otherwise the main actor admits and lands it, as for a caller on it.
    ///
    /// - parameters:
    ///   - params: The params; `nil` asks the ``paramSource`` (or sends none).
    ///   - body: The body (an `Encodable` value, bytes, a file, a form); with it, params go into
    ///     the query.
    ///   - ignoringCache: Skip the cache lookup (pull to refresh); the fresh response is still stored.
    /// - throws: ``RunwayError``, exactly as a delegate would receive it; a reformer's own error
    ///   becomes ``RunwayError/invalidResponse(reason:)``.
    @discardableResult
    nonisolated(nonsending) public func load(
        with params: Parameters? = nil, body: RequestBody? = nil, ignoringCache: Bool = false
    ) async throws(RunwayError) -> Endpoint.DefaultReformer.Output {
        // The default of every API that declares none: nothing to shape.
        if Endpoint.DefaultReformer.self == RawResponseReformer.self {
            let response = try await loadResponse(with: params, body: body, ignoringCache: ignoringCache)
            if let raw = response as? Endpoint.DefaultReformer.Output { return raw }
            return try await Self.reform(response, with: current.withLock { $0 }.defaultReformer)
        }
        return try await load(
            with: params, body: body, ignoringCache: ignoringCache, reformedBy: current.withLock { $0 }.defaultReformer)
    }

    /// Loads and returns the answer shaped by `reformer` (the view's own shape, over the API's
    /// default); the delegate is not involved.
    ///
    /// The reformer runs off the main actor, in the load's own task before it comes back to
    /// land: the main actor only lands the load and hands back the finished value. The options
    /// and rules are those of ``load(with:body:ignoringCache:)-(Parameters?,_,_)``.
    ///
    /// - throws: ``RunwayError``; a reformer's own error becomes
    ///   ``RunwayError/invalidResponse(reason:)``.
    nonisolated(nonsending) public func load<R: Reformer>(
        with params: Parameters? = nil, body: RequestBody? = nil, ignoringCache: Bool = false, reformedBy reformer: R
    ) async throws(RunwayError) -> R.Output {
        let (response, reformed) = try await loadLanded(with: params, body: body, ignoringCache: ignoringCache) {
            response throws(RunwayError) in try Self.reformNow(response, with: reformer)
        }
        if let reformed { return try reformed.get() }
        return try await Self.reform(response, with: reformer)
    }

    /// The load of ``load(with:body:ignoringCache:)``, before any reformer.
    nonisolated(nonsending) func loadResponse(
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
    /// succeeds; its error is the caller's alone. A load that needs nothing of the main actor
    /// runs where its caller is; any other on the main actor.
    nonisolated(nonsending) private func loadLanded<Output: Sendable>(
        with params: Parameters?, body: RequestBody?, ignoringCache: Bool, shape: Shape<Output>?
    ) async throws(RunwayError) -> (response: RawResponse, shaped: Result<Output, RunwayError>?) {
        let api = current.withLock { $0 }
        let asksParamSource = params == nil && state.withLock { $0.hasParamSource }
        guard !asksParamSource, api.requestStrategy != .ignoreNewWhileLoading,
            Self.interceptors(of: api, engine: engine).isEmpty
        else {
            return try await loadLandedOnMainActor(with: params, body: body, ignoringCache: ignoringCache, shape: shape)
        }
        let params = params ?? [:]
        let id = LoadID.next()
        let flight = Flight(call: CallInfo(loadID: id, apiName: api.name, service: api.service, params: params), interceptors: [])
        if let refused = Self.refusal(of: params, by: api) {
            engine.firstLoad.loadEnded()
            _ = state.withLock { $0.record(.failure(refused), of: id) }
            throw refused
        }
        let cancellation = LoadCancellation()
        // Nobody joins a load under these strategies: it flies.
        _ = enterBook(flight, strategy: api.requestStrategy, notifiesDelegate: false, waiter: nil, joinable: false)
        tasks.insert(cancellation, for: id)
        // Cancelled on the main actor between the two: its handle was not there to cancel.
        if state.withLock({ $0.book.entries[id] == nil }) { cancellation.cancel() }
        let (result, shaped) = await Self.fly(
            api, engine: engine, params: params, body: body, loadID: id, ignoringCache: ignoringCache,
            cancellation: cancellation, shape: shape)
        return (try await landInCallersTask(id, result).get(), shaped)
    }

    /// ``loadLanded(with:body:ignoringCache:shape:)`` for a load the main actor admits and lands:
    /// one with interceptors, a param source to ask, or others who may join it.
    private func loadLandedOnMainActor<Output: Sendable>(
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
            return (try await landInCallersTask(id, result).get(), shaped)
        }
    }

    /// Loads and delivers each answer as it comes: for an API whose policy says
    /// ``CachePolicy/cacheThenNetwork``, the stored answer at once (marked stale,
    /// ``ResponseOrigin/isStale``) and then the network's — in that order, never the stored one
    /// after the network's; otherwise the one answer. The stream ends after the network's
    /// outcome (a success or the ``RunwayError``); ending the iteration cancels the load.
    ///
    /// ```swift
    /// for await update in manager.updates(with: ["city": "sh"]) {
    ///     if case .success(let response) = update { render(response) }  // stale first, then fresh
    /// }
    /// ```
    public func updates(
        with params: Parameters? = nil, body: RequestBody? = nil
    ) -> AsyncStream<Result<RawResponse, RunwayError>> {
        let (stream, continuation) = AsyncStream<Result<RawResponse, RunwayError>>.makeStream()
        let waiter = Waiter()
        begin(
            params: resolve(params), body: body, strategy: api.requestStrategy, notifiesDelegate: false, waiter: waiter,
            onPreview: { continuation.yield(.success($0)) })
        let task = Task { @MainActor in
            continuation.yield(await self.wait(for: waiter))
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
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

    /// Cancels one load: the one ``loadData(with:body:ignoringCache:)-(Parameters?,_,_)`` returned `id` for, or an
    /// `async` ``load(with:body:ignoringCache:)-(Parameters?,_,_)`` by the id its delegate callbacks and
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
        guard let entry = state.withLock({ $0.book.finish(id) }) else { return false }
        cancelAndDeliver(id, entry)
        return true
    }

    public func cancelAllRequests() {
        for (id, entry) in state.withLock({ $0.book.finishAll() }) { cancelAndDeliver(id, entry) }
    }

    /// Cancels the task of a load already finished in the book and delivers it as cancelled.
    nonisolated func cancelAndDeliver(_ id: LoadID, _ entry: LoadBook<Waiter, Flight>.Entry) {
        tasks.cancel(id)
        deliverLater(entry, .failure(.cancelled))
    }

    /// The service's interceptors, then the API's.
    var interceptors: [any Interceptor] { Self.interceptors(of: api, engine: engine) }

    /// The service's interceptors, then the API's, of `api` as registered with `engine`.
    nonisolated static func interceptors(of api: Endpoint, engine: Engine) -> [any Interceptor] {
        let own = api.interceptors
        let service = engine.interceptors(of: api.service)
        return own.isEmpty ? service : service + own
    }
}
