/// Cancels one load without cancelling the task that awaits it.
///
/// A manager's `async` load runs in its caller's task, with no task of its own: a task per load
/// was most of what the manager cost over a plain `await`. The manager must still be able to end
/// such a load by itself — a newer load under ``RequestStrategy/cancelInFlight``,
/// ``APIManaging/cancelAllRequests()``, a pagination refresh — and cancelling the caller's task
/// would leave that task cancelled after the load. So the engine honours this handle as it honours task cancellation:
/// each wait of the load (an exchange, a retry's back-off, a shared call) registers how to stop
/// itself while it runs, and the engine checks the handle between steps.
///
/// The engine gives every exchange a handle of its own, ``TransportRequest/cancellation``, which
/// it cancels at the exchange's deadline, when the load's handle is cancelled, or when the
/// calling task is. A transport of your own that says ``Transport/honoursCancellation`` stops
/// the exchange when it fires; otherwise the engine runs the exchange in a task the handle
/// cancels. A transport over an `async` library that stops only on task cancellation needs
/// nothing more than the default; one with a handle to cancel (a URLSession task, a stream)
/// registers it, for example:
///
/// ```swift
/// let registration = request.cancellation?.register { task.cancel() }
/// defer { if let registration { request.cancellation?.end(registration) } }
/// return try await withTaskCancellationHandler { try await response(of: task) } onCancel: { task.cancel() }
/// ```
public final class LoadCancellation: Sendable {
    private struct State {
        var isCancelled = false
        var handler: (@Sendable () -> Void)?
    }

    /// What a registration replaced, restored when it ends.
    public struct Registration: Sendable {
        fileprivate let previous: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// Creates a handle that is not cancelled.
    public init() {}

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Cancels the load: the wait registered now is stopped, and later ones stop at once.
    public func cancel() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.handler = nil }
            return state.handler
        }
        handler?()
    }

    /// Registers how to stop the wait about to begin; called at once when the load is already
    /// cancelled. End it with ``end(_:)`` when the wait is over.
    ///
    /// A load waits for one thing at a time; a wait inside another (a transport's exchange inside
    /// the engine's) adds to it, and ending it restores the outer one.
    public func register(_ stop: @escaping @Sendable () -> Void) -> Registration {
        let registration = state.withLock { state -> Registration? in
            guard !state.isCancelled else { return nil }
            let previous = state.handler
            if let previous {
                state.handler = { @Sendable in
                    stop()
                    previous()
                }
            } else {
                state.handler = stop
            }
            return Registration(previous: previous)
        }
        guard let registration else {
            stop()
            return Registration(previous: nil)
        }
        return registration
    }

    /// Ends a wait begun with ``register(_:)``.
    public func end(_ registration: Registration) {
        state.withLock { state in
            guard !state.isCancelled else { return }
            state.handler = registration.previous
        }
    }
}

extension Optional where Wrapped == LoadCancellation {
    /// Whether the load was cancelled, by this handle or through its task.
    var isCancelledOrTask: Bool { Task.isCancelled || (self?.isCancelled ?? false) }
}

extension LoadCancellation {
    /// Runs `operation` in a task of its own that this handle, or cancelling the calling task,
    /// cancels: for a wait that honours only task cancellation (a back-off, another transport).
    public func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await operation() }
        let registration = register { task.cancel() }
        defer { end(registration) }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
