import Foundation
@testable import RunwayServer
import RunwayTestSupport
import Testing

/// Work given at most a time (what `/ready` and the PostgreSQL connect use): its outcome, or
/// ``TimeBound/TimedOut`` at the deadline, the work told to stop without being awaited.
@Suite("Work bound in time", .timeLimit(.minutes(10)))
struct TimeBoundTests {
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
}
