import Foundation
import PostgresNIO
@testable import RunwayServer
import RunwayTestSupport
import Testing

/// `PostgresCollectorDatabase.connect`'s deadline (``TimeBound``) ends the connect even when the
/// work it bounds never notices: beside a busy suite, seven connects whose client was stopped at
/// the deadline waited for ever on PostgresNIO's request for a connection.
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
        // The work's task may not have started by the deadline: it learns of the cancellation
        // when it does, so the test waits for that instead of looking at once.
        let (told, tell) = AsyncStream<Void>.makeStream()
        await #expect(throws: TimeBound.TimedOut.self) {
            try await TimeBound.run(within: .milliseconds(50)) {
                await withTaskCancellationHandler {
                    await stuck.wait()
                } onCancel: {
                    tell.yield()
                }
            }
        }
        var cancellations = told.makeAsyncIterator()
        #expect(await cancellations.next() != nil, "the work is told to stop")
        stuck.release()
    }

    @Test("work that ends first is its outcome: done, or its error")
    func workEndsFirst() async throws {
        try await TimeBound.run(within: .seconds(600)) {}
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await TimeBound.run(within: .seconds(600)) { throw Refused() } }
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
