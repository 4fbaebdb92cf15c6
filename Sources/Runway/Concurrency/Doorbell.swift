/// Wakes one waiting loop: a ring that arrives while nobody waits is kept for the next wait, so
/// no ring is lost between a loop's check and its wait.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Bool, Never>?
        var generation = 0
    }

    private let state = Locked(State())

    /// Wakes the waiter, or the next one to wait.
    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: true)
    }

    /// Returns after a ring, after `timeout` (when given) on `clock`, or when the task is
    /// cancelled.
    ///
    /// - returns: Whether a ring ended the wait.
    @discardableResult
    func wait(timeout: Duration?, clock: (any Clock<Duration>)? = nil) async -> Bool {
        let generation = state.withLock { state -> Int? in
            if state.rung {
                state.rung = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return true }
        let timer = timeout.map { timeout in
            Task { [self] in
                if let clock {
                    try? await clock.sleep(for: timeout)
                } else {
                    try? await Task.sleep(for: timeout)
                }
                wake(generation)
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let rungNow = state.withLock { state -> Bool? in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    if state.generation != generation { return false }
                    state.waiter = continuation
                    return nil
                }
                if let rungNow { continuation.resume(returning: rungNow) }
            }
        } onCancel: {
            wake(generation)
        }
    }

    /// Resumes the waiter of `generation` only: a late timer never wakes a later wait.
    private func wake(_ generation: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.generation == generation, let waiter = state.waiter else {
                if state.generation == generation { state.generation += 1 }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: false)
    }
}
