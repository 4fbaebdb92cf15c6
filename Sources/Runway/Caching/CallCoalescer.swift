import HTTPTypes

/// Lets identical in-flight loads share one network call.
///
/// The first load of a call starts it; later identical ones join it. A joiner whose task is cancelled
/// stops waiting at once. Joining, leaving and ending a call all happen under one lock, so a
/// load arriving as a call ends never joins a call that is being cancelled: it starts a new one.
///
/// The engine's calls (``lead(_:cancellation:onJoin:_:)``, safe requests only) run in the task
/// of the load that started them, as a load no other joins would: no task and no hop of their
/// own. When that load leaves first, its request ends with it and a load still waiting sends
/// the request again. Calls that must never be sent twice (``run(_:_:)``) run in a task of
/// their own, cancelled only when nobody waits any more.
package final class CallCoalescer: Sendable {
    /// What every caller of one call receives: its result, and the head of its last answer.
    package struct Outcome: Sendable {
        package var result: Result<RawResponse, RunwayError>
        package var answer: HTTPResponse?

        package init(result: Result<RawResponse, RunwayError>, answer: HTTPResponse? = nil) {
            self.result = result
            self.answer = answer
        }

        /// Whether the call ended cancelled.
        var isCancelled: Bool {
            guard case .failure(.cancelled) = result else { return false }
            return true
        }
    }

    /// Which call a safe load makes, for ``lead(_:cancellation:onJoin:_:)``: its kind (the API's
    /// type) and its key, the text that tells calls apart — made only once another load of the
    /// same kind is in flight beside it.
    ///
    /// A load one after another, as most are, never makes its key: the key of a call touches
    /// every part of the request (``FlightKey``), and on a sequential load over the network
    /// that half microsecond of work, run once with cold caches, cost about 4 µs of CPU
    /// (measured in `Benchmarks/README.md`).
    package struct Identity: Sendable {
        let kind: ObjectIdentifier
        fileprivate let known: String?
        fileprivate let make: (@Sendable () -> String?)?

        /// A call whose key is known already (a cache key's digest).
        package init(kind: ObjectIdentifier, key: String) {
            self.kind = kind
            known = key
            make = nil
        }

        /// A call whose key `make` makes when another load of `kind` is in flight; a `nil`
        /// key shares with no other call. `make` must give the same key whenever it is called.
        package init(kind: ObjectIdentifier, makingKey make: @escaping @Sendable () -> String?) {
            self.kind = kind
            known = nil
            self.make = make
        }

        /// The key, made now if it is not known.
        fileprivate func key() -> String? { known ?? make?() }
    }

    /// What a waiting load is told: the call's outcome, or that the load running it left before
    /// it ended, so this load runs it itself.
    private enum Verdict: Sendable {
        case outcome(Outcome)
        case takeOver
    }

    /// A call of ``run(_:_:)``: who waits for it, and its task, once made.
    private struct Call {
        let id: UInt64
        var waiters: [ObjectIdentifier: OneShot<Verdict>]
        var task: Task<Void, Never>?
    }

    /// A call of ``lead(_:cancellation:onJoin:_:)``, run in its leader's task.
    private struct Led {
        var waiters: [ObjectIdentifier: OneShot<Verdict>] = [:]
        /// Its key once made (`.some(nil)`: made, and it shares with no other call).
        var key: String??
    }

    /// The led calls of one kind, changed in place under the lock (a copy taken out of the
    /// table and put back copied every call of the kind: at 32 in flight it cost 3–4 µs a load).
    private struct Kind {
        var calls: [UInt64: Led] = [:]
        /// The calls whose key is made, by key.
        var byKey: [String: UInt64] = [:]
        /// The calls whose key is not made yet, with the identity that makes it (kept whole: a
        /// closure kept alone in a dictionary is wrapped for it, an allocation a load).
        var unkeyed: [UInt64: Identity] = [:]
    }

    /// What a load does on arriving at a led call's kind.
    private enum Arrival {
        /// Make these calls' keys (and its own, if not made), then arrive again.
        case makeKeys([(id: UInt64, identity: Identity)])
        case lead(id: UInt64)
        case join(id: UInt64, waiter: OneShot<Verdict>, count: Int)
    }

    private struct State {
        var calls: [String: Call] = [:]
        /// Kinds stay once seen (as many as the app has API types), their storage reused.
        var led: [ObjectIdentifier: Kind] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())
    /// Told each time a load joins or starts a call (tests wait on it): the call's key when it
    /// is made (empty otherwise), and how many loads share the call.
    package let joined = Locked<(@Sendable (String, Int) -> Void)?>(nil)

    /// Runs `operation` once per call among concurrent callers, in the task of the first — the
    /// call's leader — and hands its outcome to those who joined; for safe requests (`GET`,
    /// `HEAD`), which may be sent twice. Calls are the same when their kinds and keys are.
    ///
    /// A joiner whose task is cancelled, or whose `cancellation` fires, leaves at once. The
    /// leader's cancellation ends `operation` (the leader passes its handle on), and so the call:
    /// when it ends cancelled, a load still waiting runs `operation` of its own instead, as the
    /// new leader, rather than inherit a cancellation that is not its own.
    ///
    /// - parameters:
    ///   - cancellation: Makes this caller leave, as cancelling its task does.
    ///   - onJoin: Called when this call joined one already in flight (once per load).
    /// - returns: The outcome, and whether this caller ran `operation` itself.
    func lead(
        _ identity: Identity, cancellation: LoadCancellation?, onJoin: () -> Void = {}, _ operation: () async -> Outcome
    ) async -> (outcome: Outcome, led: Bool) {
        var reported = false
        var own: String?? = identity.known.map { .some($0) }
        /// Keys made for other calls since the last arrival, kept as this load arrives again.
        var made: [(id: UInt64, key: String?)] = []
        while true {
            let arrival = state.withLock { [made] state -> Arrival in
                if !made.isEmpty { Self.record(made, in: &state.led[identity.kind, default: Kind()]) }
                let arrival = Self.arrive(
                    identity, key: own, newID: state.lastID + 1, in: &state.led[identity.kind, default: Kind()])
                if case .lead = arrival { state.lastID += 1 }
                return arrival
            }
            switch arrival {
            case .makeKeys(let unmade):
                // Outside the lock: a key may take a while, and is the same whoever makes it.
                if own == nil { own = .some(identity.key()) }
                made = unmade.map { (id: $0.id, key: $0.identity.key()) }
                continue
            case .lead(let id):
                if !reported {
                    reported = true
                    joined.withLock { $0 }?((own ?? nil) ?? "", 1)
                }
                let outcome = await operation()
                // Ended by its leader leaving: those waiting do not inherit the cancellation.
                let handOver = outcome.isCancelled && (Task.isCancelled || cancellation?.isCancelled == true)
                for waiter in end(identity.kind, id: id) { waiter.resolve(handOver ? .takeOver : .outcome(outcome)) }
                return (outcome, true)
            case .join(let id, let waiter, let count):
                if !reported {
                    reported = true
                    joined.withLock { $0 }?((own ?? nil) ?? "", count)
                    onJoin()
                }
                let kind = identity.kind
                let verdict = await wait(for: waiter, cancellation: cancellation) { [self] in
                    state.withLock { _ = $0.led[kind]?.calls[id]?.waiters.removeValue(forKey: ObjectIdentifier(waiter)) }
                }
                switch verdict {
                case .outcome(let outcome): return (outcome, false)
                case .takeOver: continue
                }
            }
        }
    }

    /// A load of `identity`, its key `key` if made, arrives at its `kind`: it joins the call
    /// with its key, leads a call of its own (numbered `newID`), or first makes the keys it needs
    /// to tell which. Under the lock.
    private static func arrive(_ identity: Identity, key: String??, newID: UInt64, in kind: inout Kind) -> Arrival {
        // Alone in its kind: it leads, its key unmade until another load arrives beside it.
        if kind.calls.isEmpty, key == nil, identity.make != nil {
            kind.calls[newID] = Led(key: nil)
            kind.unkeyed[newID] = identity
            return .lead(id: newID)
        }
        guard let key, kind.unkeyed.isEmpty else { return .makeKeys(kind.unkeyed.map { (id: $0.key, identity: $0.value) }) }
        if let text = key, let id = kind.byKey[text], kind.calls[id] != nil {
            let waiter = OneShot<Verdict>()
            kind.calls[id]?.waiters[ObjectIdentifier(waiter)] = waiter
            // The leader counts as one of those sharing the call.
            return .join(id: id, waiter: waiter, count: (kind.calls[id]?.waiters.count ?? 0) + 1)
        }
        kind.calls[newID] = Led(key: .some(key))
        if let text = key { kind.byKey[text] = newID }
        return .lead(id: newID)
    }

    /// Keys made for calls of `kind`, kept for those still in flight. Under the lock.
    private static func record(_ made: [(id: UInt64, key: String?)], in kind: inout Kind) {
        for (id, key) in made {
            guard kind.unkeyed.removeValue(forKey: id) != nil else { continue }
            kind.calls[id]?.key = .some(key)
            // A key another call in flight already has (made while this one's was not)
            // leaves this call to its own leader.
            if let key, kind.byKey[key] == nil { kind.byKey[key] = id }
        }
    }

    /// Ends led call `id` of `kind` and hands back who waits.
    private func end(_ kind: ObjectIdentifier, id: UInt64) -> [OneShot<Verdict>] {
        state.withLock { state in Self.end(id, in: &state.led[kind, default: Kind()]) }
    }

    /// Removes call `id` from `kind` and hands back who waits. Under the lock.
    private static func end(_ id: UInt64, in kind: inout Kind) -> [OneShot<Verdict>] {
        guard let call = kind.calls.removeValue(forKey: id) else { return [] }
        kind.unkeyed.removeValue(forKey: id)
        if case .some(.some(let key)) = call.key, kind.byKey[key] == id { kind.byKey.removeValue(forKey: key) }
        return Array(call.waiters.values)
    }

    /// Waits as `waiter` until its call ends or this caller leaves — its task cancelled or its
    /// `cancellation` fired; leaving resolves `waiter` and runs `leaving`, which takes it off
    /// its call.
    private func wait(
        for waiter: OneShot<Verdict>, cancellation: LoadCancellation?, leaving: @escaping @Sendable () -> Void
    ) async -> Verdict {
        let leave: @Sendable () -> Void = {
            waiter.resolve(.outcome(Outcome(result: .failure(.cancelled))))
            leaving()
        }
        let registration = cancellation?.register(leave)
        defer { if let registration { cancellation?.end(registration) } }
        return await withTaskCancellationHandler {
            await waiter.value()
        } onCancel: {
            leave()
        }
    }

    /// Runs `operation` once per key among concurrent callers, handing each the outcome; a
    /// caller leaves when its task is cancelled. For calls other than the engine's flights (a
    /// generated client's `ignoreNewWhileLoading`): their keys must look like neither a cache
    /// key's hex digest nor a ``FlightKey``'s text (which starts `runway-flight-`).
    package func run(_ key: String, _ operation: @escaping @Sendable () async -> Outcome) async -> Outcome {
        let waiter = OneShot<Verdict>()
        let (callID, count) = state.withLock { state -> (UInt64, Int) in
            if var existing = state.calls[key] {
                existing.waiters[ObjectIdentifier(waiter)] = waiter
                state.calls[key] = existing
                return (existing.id, existing.waiters.count)
            }
            state.lastID += 1
            state.calls[key] = Call(id: state.lastID, waiters: [ObjectIdentifier(waiter): waiter], task: nil)
            return (state.lastID, 1)
        }
        if count == 1 { start(key, id: callID, operation) }
        joined.withLock { $0 }?(key, count)
        // Such a call is never handed over: its task runs it to the end for whoever waits.
        let identity = ObjectIdentifier(waiter)
        let verdict = await wait(for: waiter, cancellation: nil) { [self] in
            // Leaving and, for the call's last waiter, ending the call are one step.
            let abandoned = state.withLock { state -> Task<Void, Never>? in
                guard var call = state.calls[key], call.id == callID else { return nil }
                call.waiters.removeValue(forKey: identity)
                guard call.waiters.isEmpty else {
                    state.calls[key] = call
                    return nil
                }
                // A task not made yet is cancelled as it is recorded (`start`).
                state.calls.removeValue(forKey: key)
                return call.task
            }
            abandoned?.cancel()
        }
        guard case .outcome(let outcome) = verdict else { return Outcome(result: .failure(.cancelled)) }
        return outcome
    }

    /// Starts the call `id` of `key`, whose entry is already recorded, in a task of its own: at
    /// once on this thread where the platform can (no hop before the call's first wait), and
    /// never under the lock, since the call may itself wait on another key (a credential's
    /// renewal). A call every waiter left before its task was recorded is cancelled here.
    private func start(_ key: String, id: UInt64, _ operation: @escaping @Sendable () async -> Outcome) {
        let task: Task<Void, Never>
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            task = Task.immediate { self.finish(key, id: id, with: await operation()) }
        } else {
            task = Task { self.finish(key, id: id, with: await operation()) }
        }
        let recorded = state.withLock { state -> Bool in
            guard var call = state.calls[key], call.id == id else { return false }
            call.task = task
            state.calls[key] = call
            return true
        }
        // Every waiter left while the task was being made (or the call is already over).
        if !recorded { task.cancel() }
    }

    /// Hands the outcome of call `id` to everyone waiting for it, and ends the call (unless
    /// every waiter already left and a new call of the key began).
    private func finish(_ key: String, id: UInt64, with outcome: Outcome) {
        let waiters = state.withLock { state -> [OneShot<Verdict>] in
            guard let call = state.calls[key], call.id == id else { return [] }
            state.calls.removeValue(forKey: key)
            return Array(call.waiters.values)
        }
        for waiter in waiters { waiter.resolve(.outcome(outcome)) }
    }
}
