/// Wakes one waiting loop: a ring that arrives while nobody waits is kept for the next wait, so
/// no ring is lost between a loop's check and its wait.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }

    private let state = Locked(State())

    /// Wakes the waiter, or the next one to wait.
    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after a ring, after `timeout` (when given), or when the task is cancelled.
    func wait(timeout: Duration?) async {
        let generation = state.withLock { state -> Int? in
            if state.rung {
                state.rung = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let timer = timeout.map { timeout in
            Task { [self] in
                try? await Task.sleep(for: timeout)
                wake(generation)
            }
        }
        defer { timer?.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || state.generation != generation {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake(generation)
        }
    }

    /// Resumes the waiter of `generation` only: a late timer never wakes a later wait.
    private func wake(_ generation: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else {
                if state.generation == generation { state.generation += 1 }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
