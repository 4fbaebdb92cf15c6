import Runway

/// Waits until `count` loads have joined the call of one key in an engine's coalescer: a test
/// opens its gate only when every load it started shares the one request.
public final class JoinWatch: Sendable {
    private let state = TestBox<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    public init() {}

    /// Watches `engine`'s coalescer (one watch per engine).
    public func install(on engine: Engine) {
        engine.coalescer.joined.withLock { hook in
            hook = { [self] _, count in self.reached(count) }
        }
    }

    private func reached(_ count: Int) {
        var ready: [CheckedContinuation<Void, Never>] = []
        state.mutate { state in
            state.count = max(state.count, count)
            ready = state.waiters.filter { $0.0 <= state.count }.map(\.1)
            state.waiters.removeAll { $0.0 <= state.count }
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `count` loads share one call.
    public func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            var now = false
            state.mutate { state in
                if state.count >= count { now = true } else { state.waiters.append((count, continuation)) }
            }
            if now { continuation.resume() }
        }
    }
}
