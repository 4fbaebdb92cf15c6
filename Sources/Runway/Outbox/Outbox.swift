import Foundation
public import Logging
public import RunwayStorage

/// The app's own changes — a post, a like, an order — kept on disk until the server has them,
/// applied once however often they are sent: a durable outbox for mutating requests.
///
/// ``enqueue(_:params:body:queue:)`` stores the request in the container's application support
/// and returns once it is committed: from then on it survives the process being killed. Each item
/// gets an `Idempotency-Key` (the IETF httpapi draft's header) that it keeps on every try, so a
/// server that honours the key (RunwayServer's `IdempotencyMiddleware`) applies it once even when
/// an answer was lost and the item sent again. Items of one ``OutboxQueue`` go one at a time, in
/// the order they were enqueued; independent queues go side by side.
///
/// Items are sent when the engine's path is reachable; a try that fails for a reason that may
/// pass (no network, a 5xx, 401, 408, 409, 425, 429, a timeout) waits, doubling with jitter and
/// honouring `Retry-After` — a wait that survives a relaunch in the same boot. A 4xx that will
/// never succeed ends the item, not its queue. Every change of state reaches ``updates()`` and the
/// ``delegate`` (on the main actor).
///
/// Items belong to the sign-in they were made under. Give the outbox the ``Authentication`` of
/// its service and open it at launch, before the app can sign out: a ``Authentication/reset()``
/// then holds or drops the signed-out user's items (``Policy/signOut``) before it returns, and they
/// are never sent as the next user — not in this launch, not after a relaunch.
///
/// The README's "Changes made offline: the outbox" shows it in use.
public final class Outbox: Sendable {
    /// The policy in use.
    public let policy: Policy
    let engine: Engine
    let logger: Logger
    let store: OutboxStore
    let authentication: Authentication?
    /// The sign-in generation stored when the outbox opened, and the authentication's resets then:
    /// a later epoch of this process is generation `base.generation + resets - base.resets`.
    let base: (generation: Int64, resets: Int)
    /// The sign-in generation now.
    let signIn: Locked<Int64>
    let bell = Doorbell()
    let listeners = Locked<[UUID: AsyncStream<OutboxUpdate>.Continuation]>([:])
    let tasks = Locked<[Task<Void, Never>]>([])
    let closed = Locked(false)
    let completions = Locked<[Completion]>([])
    /// Items being stored (or adopted) whose `.pending` is still to be reported. The row is
    /// visible to the sender once committed, before the call that stored it reports it: the
    /// sender may take it first and would report `.sending` before `.pending`. Whoever comes
    /// first reports `.pending`, once, under this lock (``reportPending(_:)``).
    let unreported = Locked<Set<String>>([])

    /// Learns of every change of an item's state, on the main actor, in order.
    @MainActor public weak var delegate: (any OutboxDelegate)?

    /// Opens the outbox in `container` and starts sending what an earlier run left.
    ///
    /// - parameters:
    ///   - engine: Sends the items; their services must be registered with it.
    ///   - container: Where the outbox lives (application support, excluded from backups).
    ///   - authentication: The sign-in the items belong to; `nil` when they need none.
    ///   - policy: Bounds, back-off, concurrency, what a sign-out does, the file's name.
    ///   - logger: Receives a line for a damaged file, a failed try and a final failure.
    /// - throws: ``OutboxError/storage(reason:)`` when the outbox cannot be opened or made.
    public init(
        engine: Engine, container: Container, authentication: Authentication? = nil, policy: Policy = Policy(),
        logger: Logger = Logger(label: "runway.outbox")
    ) throws(OutboxError) {
        self.engine = engine
        self.policy = policy
        self.logger = logger
        self.authentication = authentication
        store = try OutboxStore(container: container, name: policy.databaseName, logger: logger)
        let generation: Int64
        do {
            generation = try store.signIn()
        } catch let error as OutboxError {
            throw error
        } catch {
            throw .storage(reason: "\(error)")
        }
        base = (generation, authentication?.epoch.resets ?? 0)
        signIn = Locked(generation)
        authentication?.onReset { [weak self] epoch in self?.signedOut(to: epoch) }
        var running = [Task.detached { [self] in await runSender() }]
        if let watch = bell.ringOnPathChanges(of: engine) { running.append(watch) }
        let deliveries = updates()
        running.append(Task { @MainActor [weak self] in
            for await update in deliveries {
                guard let self else { return }
                delegate?.outbox(self, didUpdate: update)
            }
        })
        tasks.withLock { $0 = running }
    }

    /// Opens the outbox as ``init(engine:container:authentication:policy:logger:)`` does, off the
    /// caller's actor: opening its SQLite file is disk work a launch on the main actor must not
    /// wait for there. It runs on a dispatch queue of its own, never on a thread of Swift's
    /// cooperative pool.
    @concurrent
    public static func open(
        engine: Engine, container: Container, authentication: Authentication? = nil, policy: Policy = Policy(),
        logger: Logger = Logger(label: "runway.outbox")
    ) async throws(OutboxError) -> Outbox {
        try await BlockingWork.run { () throws(OutboxError) in
            try Outbox(engine: engine, container: container, authentication: authentication, policy: policy, logger: logger)
        }
    }

    /// Stores a request of `api` and returns once it is on disk; it is sent in its turn.
    ///
    /// The parameters are checked by the API's validator and the request is built once now, so
    /// that a request that could never be sent is refused here rather than later. What is stored
    /// is the request (service, method, path, name, header fields, timeout, parameters, body);
    /// the service's credential, signer, adapters and interceptors apply at each try.
    ///
    /// - parameters:
    ///   - queue: Where the item waits its turn. Default ``OutboxQueue/main``.
    /// - returns: The stored item; its ``OutboxItem/id`` is its `Idempotency-Key`.
    /// - throws: ``OutboxError/full(items:bytes:)``, ``OutboxError/invalidRequest(_:)``,
    ///   ``OutboxError/unsupportedBody``, ``OutboxError/storage(reason:)`` or
    ///   ``OutboxError/closed``; nothing is stored then.
    @discardableResult
    public func enqueue<Endpoint: API>(
        _ api: Endpoint, params: Parameters = [:], body: RequestBody? = nil, queue: OutboxQueue = .main
    ) async throws(OutboxError) -> OutboxItem {
        if closed.withLock({ $0 }) { throw .closed }
        if let refusal = InterceptedCall.validate(api, params) { throw .invalidRequest(refusal) }
        guard let registered = engine.registeredService(api.service) else {
            throw .invalidRequest(.invalidRequest(reason: "no service is registered as \"\(api.service)\""))
        }
        var stored: (data: Data, contentType: String)?
        switch body?.content {
        case nil: stored = nil
        case .data(let data, let contentType): stored = (data, contentType)
        case .json(let encode):
            do {
                stored = (try encode(api.jsonEncoder), "application/json")
            } catch {
                throw .invalidRequest(.paramsUnencodable(reason: "\(error)"))
            }
        case .file, .multipart: throw .unsupportedBody
        }
        let request = OutboxRequest(
            service: api.service, method: api.method, path: api.path, name: api.name, encoding: api.paramEncoding,
            headers: api.headers, timeout: api.timeout, params: params, body: stored?.data,
            contentType: stored?.contentType)
        let id = UUID().uuidString.lowercased()
        // Built once now: a request that could never be made is refused before it is stored.
        do {
            _ = try RequestBuilder.build(
                api: OutboxAPI(request: request, key: id, retryPolicy: .never), service: registered.service,
                base: registered.baseURL.get(), params: params, body: Self.body(of: request))
        } catch {
            throw .invalidRequest(error)
        }
        let item = OutboxItem(id: id, queue: queue.name ?? id, apiName: api.name, enqueued: Date())
        _ = unreported.withLock { $0.insert(id) }
        do {
            try await store.insert(item, request, signIn: signIn.withLock { $0 }, limits: policy)
        } catch let error as OutboxError {
            _ = unreported.withLock { $0.remove(id) }
            throw error
        } catch {
            _ = unreported.withLock { $0.remove(id) }
            throw .storage(reason: "\(error)")
        }
        reportPending(item)
        bell.ring()
        return item
    }

    /// Stores a request of `api` whose parameters are an `Encodable` value (encoded with the
    /// API's JSON encoder), as ``enqueue(_:params:body:queue:)`` does.
    @discardableResult
    public func enqueue<Endpoint: API>(
        _ api: Endpoint, params: some Encodable & Sendable, body: RequestBody? = nil, queue: OutboxQueue = .main
    ) async throws(OutboxError) -> OutboxItem {
        let encoded: Parameters
        do throws(RunwayError) { encoded = try Parameters(encoding: params, with: api.jsonEncoder) } catch {
            throw .invalidRequest(error)
        }
        return try await enqueue(api, params: encoded, body: body, queue: queue)
    }

    /// Every state change from now on, of every item, in order. Each call makes a sequence of its
    /// own; it ends when the outbox closes.
    public func updates() -> AsyncStream<OutboxUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: OutboxUpdate.self)
        let id = UUID()
        let added = listeners.withLock { listeners -> Bool in
            guard !closed.withLock({ $0 }) else { return false }
            listeners[id] = continuation
            return true
        }
        if !added { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// The items stored now (pending, sending or held), in the order they were enqueued.
    public func items() async throws(OutboxError) -> [OutboxItem] {
        do {
            return try await store.all()
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    /// The items kept from sign-ins that have ended (``Policy/SignOutHandling/hold``).
    public func held() async throws(OutboxError) -> [OutboxItem] {
        do {
            return try await store.held(before: signIn.withLock { $0 })
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    /// Sends the held items as the current user — the app's call, when it knows the same person
    /// signed in again. Returns them.
    @discardableResult
    public func adoptHeld() async throws(OutboxError) -> [OutboxItem] {
        let adopted: [OutboxItem]
        // The held items, marked before they become the sender's to take (``unreported``).
        var marked: Set<String> = []
        do {
            marked = Set(try await store.held(before: signIn.withLock { $0 }).map(\.id))
            unreported.withLock { $0.formUnion(marked) }
            adopted = try await store.adopt(into: signIn.withLock { $0 })
        } catch {
            unreported.withLock { $0.subtract(marked) }
            throw .storage(reason: "\(error)")
        }
        // One held since the list was read (a sign-out in between) was not marked: reported now.
        for item in adopted { if marked.contains(item.id) { reportPending(item) } else { emit(item, .pending) } }
        unreported.withLock { $0.subtract(marked) }
        bell.ring()
        return adopted
    }

    /// Removes the held items, each reported failed with ``RunwayError/userChanged``. Returns them.
    @discardableResult
    public func discardHeld() async throws(OutboxError) -> [OutboxItem] {
        let removed: [OutboxItem]
        do {
            removed = try await store.discard(before: signIn.withLock { $0 })
        } catch {
            throw .storage(reason: "\(error)")
        }
        for item in removed { emit(item, .failed(.userChanged)) }
        return removed
    }

    /// Stops sending (a try in flight is cancelled; the item stays and goes again at the next
    /// launch, with its key) and ends every ``updates()`` sequence.
    public func close() async {
        closed.withLock { $0 = true }
        let running = tasks.withLock { $0 }
        // The sender first: the delivery task ends when the sequences finish.
        running.first?.cancel()
        for task in running.dropFirst().dropLast() { task.cancel() }
        bell.ring()
        await running.first?.value
        for continuation in listeners.withLock({ listeners in
            defer { listeners = [:] }
            return Array(listeners.values)
        }) {
            continuation.finish()
        }
        for task in running { await task.value }
    }

    /// A reset of the authentication: the new generation is stored before `reset()` returns, and
    /// the signed-out user's items are held or dropped.
    private func signedOut(to epoch: SignInEpoch) {
        // `base.generation` is at most `OutboxStore.largestSignIn`: a process's resets cannot carry it past `Int64`.
        let generation = base.generation + Int64(epoch.resets - base.resets)
        let earlier: [OutboxItem]
        do {
            earlier = try store.recordSignIn(generation, dropEarlier: policy.signOut == .drop)
        } catch {
            logger.error("outbox could not store a sign-out; nothing of the earlier sign-in is sent", metadata: ["error": "\(error)"])
            earlier = []
        }
        signIn.withLock { $0 = max($0, generation) }
        for item in earlier { emit(item, policy.signOut == .drop ? .failed(.userChanged) : .held) }
        bell.ring()
    }

    /// Reports `item` pending unless that was done already: by the call that stored it, or by
    /// the sender, which calls this before it reports the item `.sending`.
    func reportPending(_ item: OutboxItem) {
        unreported.withLock { unreported in
            if unreported.remove(item.id) != nil { emit(item, .pending) }
        }
    }

    func emit(_ item: OutboxItem, _ state: OutboxItem.State) {
        let update = OutboxUpdate(item: item, state: state)
        for continuation in listeners.withLock({ Array($0.values) }) { continuation.yield(update) }
    }

    static func body(of request: OutboxRequest) -> RequestBody? {
        request.body.map { .data($0, contentType: request.contentType ?? "application/octet-stream") }
    }
}
