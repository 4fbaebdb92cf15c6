import Foundation
import PostgresNIO
@testable import RunwayServer
import RunwayTestSupport
import Testing

/// `PostgresCollectorDatabase.connect`'s deadline ends the connect even when the work it bounds
/// never notices: beside a busy suite, seven connects whose client was stopped at the deadline
/// waited for ever on PostgresNIO's request for a connection.
@Suite("A connect's deadline", .timeLimit(.minutes(10)))
struct ConnectDeadlineTests {
    /// Work that ignores cancellation and ends only when the test lets it.
    final class Stuck: Sendable {
        private let waiting = TestBox<CheckedContinuation<Void, Never>?>(nil)
        private let released = TestBox(false)

        func wait() async {
            await withCheckedContinuation { continuation in
                let now = released.mutate { released in
                    if !released { waiting.mutate { $0 = continuation } }
                    return released
                }
                if now { continuation.resume() }
            }
        }

        func release() {
            released.mutate { $0 = true }
            waiting.mutate { waiting in
                waiting?.resume()
                waiting = nil
            }
        }
    }

    @Test("work that never ends is timed out at the deadline, and cancelled")
    func stuckWorkTimesOut() async {
        let stuck = Stuck()
        let cancelled = TestBox(false)
        let outcome = await ConnectDeadline.run(within: .milliseconds(50)) {
            await withTaskCancellationHandler {
                await stuck.wait()
            } onCancel: {
                cancelled.mutate { $0 = true }
            }
        }
        guard case .timedOut = outcome else {
            Issue.record("expected the deadline, got \(outcome)")
            return
        }
        #expect(cancelled.value, "the work is told to stop")
        stuck.release()
    }

    @Test("work that ends first is its outcome: done, or its error")
    func workEndsFirst() async {
        guard case .done = await ConnectDeadline.run(within: .seconds(600), {}) else {
            Issue.record("expected done")
            return
        }
        struct Refused: Error {}
        guard case .failed(let error) = await ConnectDeadline.run(within: .seconds(600), { throw Refused() }) else {
            Issue.record("expected the work's error")
            return
        }
        #expect(error is Refused)
    }

    @Test("a connect that cannot connect ends as Unreachable at its deadline")
    func unreachable() async throws {
        let socket = try LoopbackSocket()
        defer { socket.close() }
        // A port bound and never listening: every connection is refused, and the pool tries again.
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: socket.port, username: "runway", password: nil, database: "postgres", tls: .disable)
        await #expect(throws: PostgresCollectorDatabase.Unreachable.self) {
            _ = try await PostgresCollectorDatabase.connect(
                configuration, logger: PostgresCollectorTests.quiet, timeout: .milliseconds(500))
        }
    }
}
