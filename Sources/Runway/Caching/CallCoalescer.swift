import HTTPTypes

/// Lets identical in-flight cacheable loads share one network call.
///
/// The first load of a key starts the call; later ones join it. A joiner whose task is cancelled
/// stops waiting at once, and the shared call is cancelled only when nobody waits any more.
/// Joining, leaving and ending a call all happen under one lock, so a load arriving as the last
/// waiter leaves never joins a call that is being cancelled: it starts a new one.
package final class CallCoalescer: Sendable {
    /// What every caller of one call receives: its result, and the head of its last answer.
    package struct Outcome: Sendable {
        package var result: Result<RawResponse, RunwayError>
        package var answer: HTTPResponse?

        package init(result: Result<RawResponse, RunwayError>, answer: HTTPResponse? = nil) {
            self.result = result
            self.answer = answer
        }
    }

    /// One shared call: who waits for it, and its task.
    private struct Call {
        let id: UInt64
        var waiters: [ObjectIdentifier: OneShot<Outcome>]
        var task: Task<Void, Never>?
    }

    private struct State {
        var calls: [String: Call] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())
    /// Told each time a load joins or starts a call (tests wait on it).
    package let joined = Locked<(@Sendable (String, Int) -> Void)?>(nil)

    /// Runs `operation` once per key among concurrent callers, handing each the outcome; a
    /// caller leaves when its task is cancelled. For calls other than the engine's flights (a
    /// generated client's `ignoreNewWhileLoading`): their keys must not look like a flight's hash.
    package func run(_ key: String, _ operation: @escaping @Sendable () async -> Outcome) async -> Outcome {
        await run(key, cancellation: nil, onJoin: nil, operation)
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
        let waiting = state.withLock { state -> [OneShot<Outcome>] in
            guard let call = state.calls[key], call.id == id else { return [] }
            state.calls.removeValue(forKey: key)
            return Array(call.waiters.values)
        }
        for waiter in waiting { waiter.resolve(outcome) }
    }

    /// Runs `operation` once per key among concurrent callers, handing each the outcome.
    ///
    /// - parameters:
    ///   - cancellation: Makes this caller leave, as cancelling its task does.
    ///   - onJoin: Called when this call joined one already in flight.
    func run(
        _ key: String, cancellation: LoadCancellation? = nil, onJoin: (() -> Void)? = nil,
        _ operation: @escaping @Sendable () async -> Outcome
    ) async -> Outcome {
        let waiter = OneShot<Outcome>()
        let identity = ObjectIdentifier(waiter)
        let (callID, count) = state.withLock { state -> (UInt64, Int) in
            if var existing = state.calls[key] {
                existing.waiters[identity] = waiter
                state.calls[key] = existing
                return (existing.id, existing.waiters.count)
            }
            state.lastID += 1
            state.calls[key] = Call(id: state.lastID, waiters: [identity: waiter], task: nil)
            return (state.lastID, 1)
        }
        if count == 1 { start(key, id: callID, operation) }
        joined.withLock { $0 }?(key, count)
        if count > 1 { onJoin?() }
        let leave: @Sendable () -> Void = {
            waiter.resolve(Outcome(result: .failure(.cancelled)))
            // Leaving and, for the last waiter, removing the call are one step.
            let abandoned = self.state.withLock { state -> Task<Void, Never>? in
                guard var call = state.calls[key], call.id == callID else { return nil }
                call.waiters.removeValue(forKey: identity)
                guard call.waiters.isEmpty else {
                    state.calls[key] = call
                    return nil
                }
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
}
