/// Opens once the engine's first load has ended — answered by the network or the cache, or
/// failed: the moment a launch's work that the first screen does not need (an endpoint
/// selector's first round, opening an operation log) can begin without competing with the first
/// load for the CPU and the connection.
final class FirstLoad: Sendable {
    private struct State {
        var ended = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters released (timed out, cancelled) before they were in place.
        var releasedEarly: Set<Int> = []
    }

    private let state = Locked(State())

    /// Whether the first load has ended.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Waiters now waiting: for tests that must know a waiter is in place.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Marks a load ended; the first call releases every waiter. The engine calls it after each
    /// load: after the first, one uncontended lock.
    func loadEnded() {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.ended else { return [] }
            state.ended = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in released { waiter.resume() }
    }

    /// Returns once the first load has ended (at once if it has), after `timeout` on `clock`,
    /// or when the task is cancelled.
    func wait(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async {
        let id = state.withLock { state -> Int? in
            guard !state.ended else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return }
        let timer = Task { [self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            release(id)
        }
        defer {
            timer.cancel()
            state.withLock { _ = $0.releasedEarly.remove(id) }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    // Ended, or released by the timer or a cancellation, before this waiter was in place.
                    if state.ended || state.releasedEarly.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            release(id)
        }
    }

    /// Resumes waiter `id` alone (its timeout passed, or its task was cancelled).
    private func release(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                if !state.ended { state.releasedEarly.insert(id) }
                return nil
            }
            return waiter
        }
        waiter?.resume()
    }
}
