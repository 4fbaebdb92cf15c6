/// How a piece of work bounded by a deadline ended.
enum ConnectDeadline: Sendable {
    case done
    case failed(any Error)
    case timedOut

    /// Runs `work` until it ends or `timeout` passes, whichever comes first, and does not wait
    /// for `work` after the deadline: it is cancelled and left to end on its own.
    ///
    /// PostgresNIO does not always fail a request for a connection when its client is stopped
    /// before a connection was made: beside a busy test suite seven such requests were waited on
    /// for ever after their deadline had stopped the client. A deadline that waited for the
    /// work to notice would wait with them.
    static func run(within timeout: Duration, _ work: @escaping @Sendable () async throws -> Void) async -> ConnectDeadline {
        let (outcomes, report) = AsyncStream<ConnectDeadline>.makeStream()
        let working = Task {
            do {
                try await work()
                report.yield(.done)
            } catch {
                report.yield(.failed(error))
            }
        }
        let watchdog = Task {
            do {
                try await Task.sleep(for: timeout)
                report.yield(.timedOut)
            } catch {}  // cancelled: the work ended first
        }
        var first = outcomes.makeAsyncIterator()
        // The caller cancelled: the stream ends, and so does the wait.
        let outcome = await first.next() ?? .failed(CancellationError())
        watchdog.cancel()
        if case .done = outcome {} else { working.cancel() }
        return outcome
    }
}
