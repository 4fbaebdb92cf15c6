import Foundation
import HTTPTypes
public import Logging
public import Tracing

/// The one place every call goes through: builds the request from service + API + params,
/// signs it, sends it through the transport, retries what may be retried, and lands the
/// response (status, JSON, convention, validator) — all off the main actor.
///
/// Business code rarely talks to the engine directly; ``APIManager`` does. An app usually keeps
/// one engine (``shared`` or its own) and registers its services with it.
///
/// For example:
///
/// ```swift
/// let engine = Engine(transport: URLSessionTransport())
/// try engine.register(Service(id: .listings, baseURLs: [.release: "https://api.example.com"]))
/// let manager = APIManager(SecondHandListAPI(), engine: engine)
/// ```
public final class Engine: Sendable {
    /// The engine managers use when given none: URLSession transport, no services yet.
    public static let shared = Engine(transport: URLSessionTransport())

    /// The transport every request goes through.
    public let transport: any Transport
    /// Where each request's log line goes.
    public let logger: Logger
    /// The response cache asked before the network, for APIs whose policy caches.
    public let cache: ResponseCache?
    /// Where loads, retries, cache outcomes and coalesced joins are counted; `nil` counts nothing.
    public let metrics: EngineMetrics?
    private let services = Locked<[ServiceID: RegisteredService]>([:])
    /// Every registered service's pins, by host.
    private let pinsByHost = Locked<[String: PublicKeyPins]>([:])
    let sleep: @Sendable (Duration) async throws -> Void
    package let coalescer = CallCoalescer()
    /// Whether the transport stops an exchange through ``TransportRequest/cancellation`` itself.
    let transportHonoursCancellation: Bool
    /// Whether the transport undoes content codings itself (``Transport/decodesContent``).
    let transportDecodesContent: Bool
    /// The deadline of every exchange in flight: the one place a deadline is kept.
    let deadlines = DeadlineWatch()
    /// The device's network: while it is unreachable, loads fail at once; its changes make
    /// endpoint selectors measure again. `nil`: every load tries the network.
    public let network: NetworkMonitor?
    /// Where every load's spans go; `nil` when no tracer is set or bootstrapped, and then
    /// nothing of tracing runs.
    let tracer: (any Tracer)?
    /// Keeps every exchange and load, for a HAR file or a waterfall; `nil` keeps nothing.
    public let recorder: LoadRecorder?
    /// Opens when the first load ends: what an endpoint selector's first round and
    /// ``waitForFirstLoad(timeout:)`` wait for.
    let firstLoad = FirstLoad()

    /// Creates an engine.
    ///
    /// - parameters:
    ///   - transport: How requests are sent.
    ///   - cache: The response cache; `nil` sends every load to the network.
    ///   - logger: Receives one line per request; defaults to the label `runway`.
    ///   - network: The device's network (``NetworkMonitor/system()``); with it, loads fail at once
    ///     with ``RunwayError/noNetwork(reason:)`` while it is unreachable, and loads in flight
    ///     when it becomes unreachable end so at that moment.
    ///   - metrics: Counts loads, durations, retries, cache outcomes and coalesced joins through
    ///     swift-metrics; by default through the factory bootstrapped in `MetricsSystem`.
    ///   - tracer: Receives a span per load, with child spans for the cache lookup, each attempt,
    ///     each request on the wire (redirect hops included), a credential refresh, the parse and
    ///     — through a manager — the reform; the tracer's context (W3C `traceparent` with an
    ///     OpenTelemetry tracer) goes on every request to the service's own origin, before the
    ///     signer, so the signature covers it. By default the tracer bootstrapped in
    ///     `InstrumentationSystem` when the engine is made; with none bootstrapped (the default),
    ///     nothing of tracing runs.
    ///   - recorder: Keeps every request on the wire and every load, with their phase timings:
    ///     a HAR file (``LoadRecorder/httpArchive(creator:)``) or a waterfall. `nil` (the default)
    ///     keeps nothing.
    ///   - sleep: Waits between retries; replace it to observe or shorten backoff in tests.
    public init(
        transport: any Transport,
        cache: ResponseCache? = nil,
        logger: Logger = Logger(label: "runway"),
        network: NetworkMonitor? = nil,
        metrics: EngineMetrics? = EngineMetrics(),
        tracer: (any Tracer)? = nil,
        recorder: LoadRecorder? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        let tracer = tracer ?? InstrumentationSystem.tracer
        self.tracer = tracer is NoOpTracer ? nil : tracer
        self.recorder = recorder
        self.transport = transport
        self.transportHonoursCancellation = transport.honoursCancellation
        self.transportDecodesContent = transport.decodesContent
        self.cache = cache
        self.logger = logger
        self.sleep = sleep
        self.network = network
        self.metrics = metrics
    }

    /// Adds `service`, or replaces the one registered under its identifier.
    ///
    /// A service with an ``EndpointSelector`` has its probing started here, over this engine's
    /// transport; its first round follows the engine's first load
    /// (``EndpointSelector/Probing/firstRoundWait``). A service's ``CookieJar`` is linked to its
    /// ``Authentication`` here, so that a reset empties it. Its pins (``Service/Connection/pins``) apply from here on to every
    /// request to a pinned host, from any service.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)``, registering nothing, when the service
    ///   contradicts itself — its signer writes a field its credential uses, either writes a
    ///   common header, a base URL reaches a pinned host over plain HTTP, or its endpoint
    ///   selector is for a host no base URL names — or asks for what this engine's transport
    ///   cannot do — a pin scope outside ``Transport/pinScopes``, or an endpoint selector on a
    ///   transport that cannot connect to a chosen address (``Transport/supportsConnectAddress``)
    ///   — or pins a host differently from another registered service: never a service that
    ///   silently gets less than it says.
    public func register(_ service: Service) throws(RunwayError) {
        try ServiceRequirements.check(service, transport: transport)
        let registered = RegisteredService(service)
        var replaced: EndpointSelector?
        let conflict = services.withLock { services -> String? in
            var pins: [String: PublicKeyPins] = [:]
            for other in services.values where other.service.id != service.id {
                for pin in other.service.connection.pins { pins[pin.host] = pin }
            }
            for pin in service.connection.pins {
                if let existing = pins[pin.host], existing != pin {
                    return "service \(service.id) pins \(pin.host) differently from another registered service or from itself"
                }
                pins[pin.host] = pin
            }
            replaced = services[service.id]?.service.connection.endpoints
            services[service.id] = registered
            pinsByHost.withLock { $0 = pins }
            return nil
        }
        if let conflict { throw .invalidRequest(reason: conflict) }
        // The selector of the registration this one replaces stops measuring.
        if let replaced, replaced !== service.connection.endpoints { replaced.stop() }
        if let jar = service.credentials.cookies { service.credentials.authentication?.clearsOnReset(jar) }
        if let selector = service.connection.endpoints, selector.probing.probesAutomatically {
            selector.start(using: transport, changes: network.map { Self.returns(to: $0) }) { [firstLoad] in
                await firstLoad.wait(timeout: selector.probing.firstRoundWait, clock: selector.probing.clock)
            }
        }
    }

    /// Returns once this engine's first load has ended — answered by the network or the cache,
    /// or failed, or refused by a manager before it was sent (its params validator, an
    /// interceptor's veto) — or `timeout` has passed, whichever comes first; at once when one
    /// has ended.
    ///
    /// Launch work the first screen does not need can follow the first load instead of
    /// running beside it: on a device with few cores, opening databases (an ``OperationLog``,
    /// an ``EndpointList``) during a cold launch takes CPU from the first load (measured in
    /// `Benchmarks/README.md`). An endpoint selector's first round waits the same way.
    ///
    /// ```swift
    /// Task(priority: .utility) {
    ///     await engine.waitForFirstLoad()
    ///     let log = try await OperationLog.open(engine: engine, service: .collector, container: container)
    ///     _ = log  // keep it for the app's life
    /// }
    /// ```
    public func waitForFirstLoad(timeout: Duration = .seconds(2)) async {
        await firstLoad.wait(timeout: timeout)
    }

    /// The pins of `authority`'s host, from whichever registered service pins it.
    func pins(forAuthority authority: String?) -> PublicKeyPins? {
        guard let authority else { return nil }
        return pinsByHost.withLock { pins in pins.isEmpty ? nil : pins[AuthorityHost.of(authority)] }
    }

    /// Rings each time `monitor`'s path becomes reachable again, or changes while reachable:
    /// the moments an endpoint's ranking may have changed.
    static func returns(to monitor: NetworkMonitor) -> AsyncStream<Void> {
        let changes = monitor.changes()
        return AsyncStream { continuation in
            let task = Task {
                for await path in changes where path.isReachable { continuation.yield() }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func registeredService(_ id: ServiceID) -> RegisteredService? {
        services.withLock { $0[id] }
    }

    /// The service registered under `id`.
    public func service(_ id: ServiceID) -> Service? {
        services.withLock { $0[id]?.service }
    }

    /// The interceptors of the service registered under `id`, without copying the whole service.
    func interceptors(of id: ServiceID) -> [any Interceptor] {
        services.withLock { $0[id]?.service.interceptors } ?? []
    }

    /// Switches the service registered under `id` to `environment`; later requests use its
    /// base URL for that environment.
    ///
    /// - returns: `false` when no service is registered under `id`.
    @discardableResult
    public func setEnvironment(_ environment: Environment, for id: ServiceID) -> Bool {
        services.withLock { services in
            guard var service = services[id]?.service else { return false }
            service.environment = environment
            services[id] = RegisteredService(service)
            return true
        }
    }

    /// Performs one call of `api` with `params`: cache, then network (every attempt), landed and
    /// logged.
    ///
    /// For an API whose ``API/cachePolicy`` caches (`GET` and `HEAD` only): a fresh entry answers
    /// without the network (unless `ignoringCache`); a stale one with validators makes the
    /// request conditional, and a `304` delivers it (``ResponseOrigin/revalidated(tier:)``); a
    /// success is stored as the server's `Cache-Control` allows; and an expired entry answers,
    /// marked stale, when the policy or the server allows it (offline, on a server failure,
    /// while it is refreshed). Identical `GET`s in flight share one network call, cached or not
    /// (``API/sharesIdenticalLoads``). Cancelling the calling task cancels the request
    /// on the wire (unless identical loads still wait on it) and returns
    /// ``RunwayError/cancelled``.
    ///
    /// - parameters:
    ///   - api: The API to call.
    ///   - params: The load's params (with a `body`, they go into the query).
    ///   - body: The load's body, if any; a load with a body is never answered from the cache.
    ///   - loadID: The load's identifier in the log; a new one by default.
    ///   - ignoringCache: Skip the cache lookup; the fresh response is still stored.
    ///
    /// The manager's rules that are not about one owner apply here too: the API's
    /// ``API/paramsValidator`` (a refusal is ``RunwayError/paramsInvalid(reason:)``, never sent)
    /// and the service's and the API's ``Interceptor``s, each hook in a manager's order, the
    /// "perform" hooks around handing the outcome back. What belongs to a manager — its
    /// ``RequestStrategy``, its delegate, ``APIManager/cancel(_:)`` — needs one.
    ///
    /// The API's properties are read once, as the load starts (a header that must change from
    /// one attempt to the next belongs in a ``RequestAdapter``); the answer carries `api` itself.
    @concurrent @inlinable
    public func perform<Endpoint: API>(
        _ api: Endpoint, params: Parameters = [:], body: RequestBody? = nil, loadID: LoadID? = nil,
        ignoringCache: Bool = false
    ) async -> Result<RawResponse, RunwayError> {
        // Read here, in the app's module, where the compiler knows `Endpoint` (``APISnapshot``).
        await performSnapshot(APISnapshot(api), params: params, body: body, loadID: loadID, ignoringCache: ignoringCache)
    }

    /// The load of ``perform(_:params:body:loadID:ignoringCache:)``, its steps compiled for the
    /// snapshot's one type.
    @concurrent @usableFromInline
    func performSnapshot(
        _ api: APISnapshot, params: Parameters, body: RequestBody?, loadID: LoadID?, ignoringCache: Bool
    ) async -> Result<RawResponse, RunwayError> {
        await performWatched(api, params: params, body: body, loadID: loadID ?? .next(), ignoringCache: ignoringCache)
            .result
    }

    /// A load with the rules of ``perform(_:params:body:loadID:ignoringCache:)`` — the params
    /// validator and the interceptors' hooks around it — also handing back the head of the last
    /// answer.
    func performWatched<Endpoint: API>(
        _ api: Endpoint, params: Parameters, body: RequestBody?, loadID: LoadID, ignoringCache: Bool
    ) async -> (result: Result<RawResponse, RunwayError>, answer: HTTPResponse?) {
        // Unwatched (the usual case): only the validator — no call to build, nothing to await
        // around the load.
        if InterceptedCall.isUnwatched(api, engine: self) {
            if let refusal = InterceptedCall.validate(api, params) { return (refused(refusal), nil) }
            let outcome = await perform(
                api, params: params, body: body, loadID: loadID, ignoringCache: ignoringCache, hooks: TransferHooks())
            return (outcome.result, outcome.answer)
        }
        let (call, refusal) = await InterceptedCall.admit(api, params: params, loadID: loadID, engine: self)
        if let refusal { return (refused(refusal), nil) }
        let outcome = await perform(
            api, params: params, body: body, loadID: loadID, ignoringCache: ignoringCache, hooks: TransferHooks())
        await call.land(outcome.result)
        return (outcome.result, outcome.answer)
    }

    /// The outcome of a load refused before anything was sent (its params, an interceptor's
    /// veto). It ends the load all the same: launch work waiting for the first load goes on at
    /// once instead of waiting out its timeout.
    func refused<Value>(_ error: RunwayError) -> Result<Value, RunwayError> {
        firstLoad.loadEnded()
        return .failure(error)
    }

    /// ``perform(_:params:body:loadID:ignoringCache:)`` with params given as an `Encodable`
    /// value, encoded with the API's ``API/jsonEncoder`` (see ``Swift/Dictionary/init(encoding:with:)``);
    /// a value that does not encode to an object fails with ``RunwayError/paramsInvalid(reason:)``
    /// and is never sent (the interceptors' failure hooks run, as for any refused call).
    @concurrent
    public func perform<Endpoint: API>(
        _ api: Endpoint, params: some Encodable & Sendable, body: RequestBody? = nil, loadID: LoadID? = nil,
        ignoringCache: Bool = false
    ) async -> Result<RawResponse, RunwayError> {
        let loadID = loadID ?? .next()
        let encoded: Parameters
        do throws(RunwayError) { encoded = try Parameters(encoding: params, with: api.jsonEncoder) } catch {
            await InterceptedCall.refuse(api, loadID: loadID, engine: self, with: error)
            return refused(error)
        }
        return await perform(api, params: encoded, body: body, loadID: loadID, ignoringCache: ignoringCache)
    }

    /// ``perform(_:params:body:loadID:ignoringCache:)`` with a transfer's hooks, also reporting
    /// the wait the last answer's `Retry-After` asked for — a caller that keeps work for later
    /// (the operation log) honours it beyond the engine's own retries — and the head of the last
    /// answer, which an ``RunwayError/httpStatus(code:body:)`` does not carry.
    ///
    /// - parameter cancellation: Ends the load as cancelling the calling task would, without
    ///   cancelling that task (a manager's load that runs in its caller's task).
    ///
    /// - parameter trace: The load's span, when the caller started it (a manager that reforms
    ///   within the load); otherwise the engine starts and ends one when it has a tracer.
    /// - parameter preview: Receives the stored answer, marked stale, before the network is asked,
    ///   for an API whose policy says ``CachePolicy/cacheThenNetwork``.
    func perform<Endpoint: API>(
        _ api: Endpoint, params: Parameters, body: RequestBody?, loadID: LoadID?, ignoringCache: Bool,
        hooks: TransferHooks, cancellation: LoadCancellation? = nil, trace: LoadTrace? = nil,
        preview: (@Sendable (RawResponse) async -> Void)? = nil
    ) async -> (result: Result<RawResponse, RunwayError>, retryAfter: Duration?, answer: HTTPResponse?) {
        let loadID = loadID ?? .next()
        defer { firstLoad.loadEnded() }
        guard trace == nil, let tracer else {
            let (result, attempts) = await performLoad(
                api, params: params, body: body, loadID: loadID, ignoringCache: ignoringCache, hooks: hooks,
                cancellation: cancellation, trace: trace, preview: preview)
            return (result, attempts.retryAfter, attempts.answer)
        }
        let own = LoadTrace.start(api, loadID: loadID, tracer: tracer)
        let (result, attempts) = await performLoad(
            api, params: params, body: body, loadID: loadID, ignoringCache: ignoringCache, hooks: hooks,
            cancellation: cancellation, trace: own, preview: preview)
        own.end(result)
        return (result, attempts.retryAfter, attempts.answer)
    }

    /// Starts the span of a load whose caller ends it (``LoadTrace/end(_:)``); `nil` without a tracer.
    func startTrace(_ api: some API, loadID: LoadID) -> LoadTrace? {
        tracer.map { LoadTrace.start(api, loadID: loadID, tracer: $0) }
    }

    /// One load: cache, then network, landed, logged, recorded — with `trace`'s child spans.
    private func performLoad<Endpoint: API>(
        _ api: Endpoint, params: Parameters, body: RequestBody?, loadID: LoadID, ignoringCache: Bool,
        hooks: TransferHooks, cancellation: LoadCancellation?, trace: LoadTrace?,
        preview: (@Sendable (RawResponse) async -> Void)?
    ) async -> (result: Result<RawResponse, RunwayError>, attempts: Attempts) {
        let started = ContinuousClock.now
        guard let registered = services.withLock({ $0[api.service] }) else {
            let result = Result<RawResponse, RunwayError>.failure(
                .invalidRequest(reason: "no service is registered as \"\(api.service)\""))
            log(loadID, api, service: api.service, result, Attempts(), started: started)
            return (result, Attempts())
        }
        // Two private or local API types that read the same once their launch-dependent contexts
        // are left out would share cache entries and stubs under one default name.
        if let shared = TypeName.ambiguousName(of: APISnapshot.identity(of: api)), api.name == shared {
            let result = Result<RawResponse, RunwayError>.failure(
                .invalidRequest(
                    reason: "two private or local API types are both named \(shared); give one of them its own `name`"))
            log(loadID, api, service: api.service, result, Attempts(), started: started)
            return (result, Attempts())
        }
        let service = registered.service
        let policy = api.cachePolicy
        // The registration, not a copy of its service: one retain instead of one per field. A
        // local function passed only where it cannot escape: its context is not allocated.
        func land(_ response: TransportResponse, _ request: HTTPRequest, _ attempt: Int) -> Result<RawResponse, RunwayError> {
            Landing.land(response, request: request, api: api, service: registered.service, attempts: attempt, trace: trace)
        }
        guard let cache, policy.tiers != .none, api.method == .get || api.method == .head, body == nil,
            let key = CacheKey(api: api, service: service, params: params)
        else {
            guard let flight = FlightKey.identity(api: api, registered: registered, params: params, body: body, hooks: hooks)
            else {
                let (result, attempts) = await runAttempts(
                    api, params: params, body: body, registered: registered, hooks: hooks, cancellation: cancellation,
                    loadID: loadID, trace: trace, land: land)
                log(loadID, api, service: service.id, result, attempts, started: started)
                return (result, attempts)
            }
            return await performSharedLoad(
                api, flight: flight, registered: registered, params: params, loadID: loadID, cancellation: cancellation,
                trace: trace, started: started, land: land)
        }
        return await performCachedLoad(
            api, key: key, cache: cache, registered: registered, params: params, loadID: loadID,
            ignoringCache: ignoringCache, cancellation: cancellation, trace: trace, started: started, preview: preview,
            land: land)
    }
}
