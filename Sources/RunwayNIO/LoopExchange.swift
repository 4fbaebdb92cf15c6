import AsyncHTTPClient
import NIOConcurrencyHelpers

/// The cancellation of an exchange whose AsyncHTTPClient task is made on its event loop, later
/// than the caller may cancel it: a cancel before the task exists keeps it from being made, one
/// after cancels it.
final class LoopExchange: Sendable {
    private enum State {
        case pending
        case running(HTTPClient.Task<SinkDelegate.Answer>)
        case cancelled
    }

    private let state = NIOLockedValueBox(State.pending)

    /// Whether the exchange was cancelled before its task was made.
    var isCancelled: Bool {
        state.withLockedValue { state in
            guard case .cancelled = state else { return false }
            return true
        }
    }

    /// The task is made: a cancel from now on cancels it; one that came in between (after the
    /// check, before this) cancels it at once.
    func started(_ task: HTTPClient.Task<SinkDelegate.Answer>) {
        let cancelled = state.withLockedValue { state in
            guard case .pending = state else { return true }
            state = .running(task)
            return false
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the task, or keeps it from being made.
    func cancel() {
        let task = state.withLockedValue { state -> HTTPClient.Task<SinkDelegate.Answer>? in
            defer { state = .cancelled }
            guard case .running(let task) = state else { return nil }
            return task
        }
        task?.cancel()
    }
}
