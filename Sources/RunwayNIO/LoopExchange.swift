import AsyncHTTPClient
import NIOConcurrencyHelpers

/// An exchange whose AsyncHTTPClient task is made on its event loop, later than the caller
/// starts waiting and may cancel: its caller's continuation until the loop takes it, then its
/// task. A cancel before the loop takes it resumes the caller at once and keeps the task from
/// being made — so a caller never waits on a loop that dropped the work (one shut down under an
/// app's client) past its own cancellation or deadline; one after cancels the task.
///
/// A value over one lock box (copies share it): one allocation an exchange.
struct LoopExchange: Sendable {
    typealias Waiting = CheckedContinuation<SinkDelegate.Answer, any Error>

    private enum State {
        /// The caller waits; the loop has not taken the exchange yet.
        case waiting(Waiting)
        /// The loop took the caller's continuation and is making the task.
        case starting
        case running(HTTPClient.Task<SinkDelegate.Answer>)
        /// The task ended; it is let go on its loop, so that its teardown is not the caller's.
        case finished
        case cancelled
        /// Made, not yet waited on.
        case new
    }

    private let state = NIOLockedValueBox(State.new)

    /// The caller waits on `continuation`; resumed at once, cancelled, when the exchange already is.
    func wait(on continuation: Waiting) {
        let cancelled = state.withLockedValue { state in
            guard case .new = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: HTTPClientError.cancelled) }
    }

    /// The loop takes the exchange: the caller's continuation, for the task's end to resume;
    /// `nil` when it was cancelled first (its caller has been resumed).
    func take() -> Waiting? {
        state.withLockedValue { state in
            guard case .waiting(let continuation) = state else { return nil }
            state = .starting
            return continuation
        }
    }

    /// On the loop: makes the task with `make` unless the exchange was cancelled first (nothing
    /// is sent then), and resumes the caller with its end — after letting it go, so that its
    /// teardown runs on the loop rather than in the caller's turn.
    func start(_ make: () -> HTTPClient.Task<SinkDelegate.Answer>) {
        guard let continuation = take() else { return }
        let task = make()
        task.futureResult.whenComplete { result in
            state.withLockedValue { $0 = .finished }
            continuation.resume(with: result)
        }
        started(task)
    }

    /// Whether the exchange still holds its task (for tests: one that ended has let it go).
    var holdsTask: Bool {
        state.withLockedValue { state in
            if case .running = state { return true }
            return false
        }
    }

    /// The task is made: a cancel from now on cancels it; one that came while it was being
    /// made cancels it at once. (A task that ended as it was made stays let go.)
    private func started(_ task: HTTPClient.Task<SinkDelegate.Answer>) {
        let cancelled = state.withLockedValue { state in
            switch state {
            case .starting:
                state = .running(task)
                return false
            case .cancelled: return true
            case .new, .waiting, .running, .finished: return false
            }
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the task, or resumes the waiting caller and keeps the task from being made.
    func cancel() {
        let (task, waiting) = state.withLockedValue { state -> (HTTPClient.Task<SinkDelegate.Answer>?, Waiting?) in
            defer { state = .cancelled }
            switch state {
            case .running(let task): return (task, nil)
            case .waiting(let continuation): return (nil, continuation)
            case .new, .starting, .finished, .cancelled: return (nil, nil)
            }
        }
        task?.cancel()
        waiting?.resume(throwing: HTTPClientError.cancelled)
    }
}
