import NIOConcurrencyHelpers

/// Work given at most a time: its outcome, or ``TimedOut`` once the time has passed — without
/// waiting for the work to notice. A query waiting for a connection to a database that is down
/// may not notice for a long while; an answer such as `/ready` must not wait for it.
enum TimeBound {
    /// The work did not end in time.
    struct TimedOut: Error {}

    /// `work`'s outcome, or ``TimedOut`` after `timeout`; the loser is cancelled, not awaited.
    static func run(within timeout: Duration, _ work: @escaping @Sendable () async throws -> Void) async throws {
        let outcome = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
        let finish = { @Sendable (result: Result<Void, any Error>) in
            outcome.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
        // Whichever ends first, the other is cancelled: on the deadline too, when the wait throws.
        defer { for task in tasks.withLockedValue({ $0 }) { task.cancel() } }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            outcome.withLockedValue { $0 = continuation }
            tasks.withLockedValue {
                $0 = [
                    Task {
                        do { try await work(); finish(.success(())) } catch { finish(.failure(error)) }
                    },
                    Task {
                        try? await Task.sleep(for: timeout)
                        finish(.failure(TimedOut()))
                    },
                ]
            }
        }
    }
}
