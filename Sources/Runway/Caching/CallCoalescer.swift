import HTTPTypes

/// Lets identical in-flight loads share one network call.
///
/// The first load of a key starts the call; later ones join it. A joiner whose task is cancelled
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

    /// What a waiting load is told: the call's outcome, or that the load running it left before
    /// it ended, so this load runs it itself.
    private enum Verdict: Sendable {
        case outcome(Outcome)
        case takeOver
    }

    /// One shared call: who waits for it, and — a call of ``run(_:_:)`` — its task, once made.
    private struct Call {
        let id: UInt64
        var waiters: [ObjectIdentifier: OneShot<Verdict>]
        /// Whether the call runs in a task of its own rather than in its leader's.
        let ownTask: Bool
        var task: Task<Void, Never>?
    }

    private struct State {
        var calls: [String: Call] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())
    /// Told each time a load joins or starts a call (tests wait on it).
    package let joined = Locked<(@Sendable (String, Int) -> Void)?>(nil)

    /// Runs `operation` once per key among concurrent callers, in the task of the first — the
    /// call's leader — and hands its outcome to those who joined; for safe requests (`GET`,
    /// `HEAD`), which may be sent twice.
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
        _ key: String, cancellation: LoadCancellation?, onJoin: (() -> Void)?, _ operation: () async -> Outcome
    ) async -> (outcome: Outcome, led: Bool) {
        var reported = false
        while true {
            let role = state.withLock { state -> (id: UInt64, waiter: OneShot<Verdict>?, count: Int) in
                if var existing = state.calls[key] {
                    let waiter = OneShot<Verdict>()
                    existing.waiters[ObjectIdentifier(waiter)] = waiter
                    state.calls[key] = existing
                    // The leader counts as one of those sharing the call.
                    return (existing.id, waiter, existing.waiters.count + 1)
                }
                state.lastID += 1
                state.calls[key] = Call(id: state.lastID, waiters: [:], ownTask: false, task: nil)
                return (state.lastID, nil, 1)
            }
            if !reported {
                reported = true
                joined.withLock { $0 }?(key, role.count)
                if role.waiter != nil { onJoin?() }
            }
            guard let waiter = role.waiter else {
                let outcome = await operation()
                // Ended by its leader leaving: those waiting do not inherit the cancellation.
                let handOver = outcome.isCancelled && (Task.isCancelled || cancellation?.isCancelled == true)
                for waiter in end(key, id: role.id) { waiter.resolve(handOver ? .takeOver : .outcome(outcome)) }
                return (outcome, true)
            }
            switch await wait(for: waiter, in: key, id: role.id, cancellation: cancellation) {
            case .outcome(let outcome): return (outcome, false)
            case .takeOver: continue
            }
        }
    }

    /// Ends call `id` of `key` (unless a new call of the key began) and hands back who waits.
    private func end(_ key: String, id: UInt64) -> [OneShot<Verdict>] {
        state.withLock { state -> [OneShot<Verdict>] in
            guard let call = state.calls[key], call.id == id else { return [] }
            state.calls.removeValue(forKey: key)
            return Array(call.waiters.values)
        }
    }

    /// Waits as `waiter` for call `id` of `key` until it ends or this caller leaves — its task
    /// cancelled or its `cancellation` fired. Leaving ends a call of ``run(_:_:)`` when nobody
    /// else waits; a led call is its leader's.
    private func wait(
        for waiter: OneShot<Verdict>, in key: String, id callID: UInt64, cancellation: LoadCancellation?
    ) async -> Verdict {
        let identity = ObjectIdentifier(waiter)
        let leave: @Sendable () -> Void = {
            waiter.resolve(.outcome(Outcome(result: .failure(.cancelled))))
            // Leaving and, for the last waiter of a call in its own task, removing the call are
            // one step.
            let abandoned = self.state.withLock { state -> Task<Void, Never>? in
                guard var call = state.calls[key], call.id == callID else { return nil }
                call.waiters.removeValue(forKey: identity)
                guard call.waiters.isEmpty, call.ownTask else {
                    state.calls[key] = call
                    return nil
                }
                // A task not made yet is cancelled as it is recorded (`start`).
                state.calls.removeValue(forKey: key)
                return call.task
            }
            abandoned?.cancel()
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
            state.calls[key] = Call(id: state.lastID, waiters: [ObjectIdentifier(waiter): waiter], ownTask: true, task: nil)
            return (state.lastID, 1)
        }
        if count == 1 { start(key, id: callID, operation) }
        joined.withLock { $0 }?(key, count)
        // Such a call is never handed over: its task runs it to the end for whoever waits.
        guard case .outcome(let outcome) = await wait(for: waiter, in: key, id: callID, cancellation: nil) else {
            return Outcome(result: .failure(.cancelled))
        }
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
        for waiter in end(key, id: id) { waiter.resolve(.outcome(outcome)) }
    }
}
