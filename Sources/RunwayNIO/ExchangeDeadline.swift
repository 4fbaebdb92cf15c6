import NIOConcurrencyHelpers
import NIOCore
import Runway

/// One deadline over a whole exchange — head, body, every byte — enforced by cancelling the
/// exchange's task when the transport's ``DeadlineWatch`` sees the deadline pass.
///
/// AsyncHTTPClient's own deadline stops at the response head; a server that sends the head and
/// then drips or stalls the body would outlive it. Cancelling the task that reads the body makes
/// AsyncHTTPClient close the connection, so the server sees the exchange end too.
enum ExchangeDeadline {
    /// Runs `operation` and fails with `RunwayError.timeout` if it has not finished by
    /// `deadline`; cancelling the calling task, or `cancellation`, cancels it as well.
    static func run<T: Sendable>(
        _ deadline: NIODeadline, watch: DeadlineWatch, cancellation: LoadCancellation? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let work = Task { try await operation() }
        let expired = NIOLockedValueBox(false)
        let ticket = watch.watch(until: deadline) {
            expired.withLockedValue { $0 = true }
            work.cancel()
        }
        defer { watch.stop(ticket) }
        let registration = cancellation?.register { work.cancel() }
        defer { if let registration { cancellation?.end(registration) } }
        do {
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch {
            if expired.withLockedValue({ $0 }) { throw RunwayError.timeout }
            throw error
        }
    }
}
