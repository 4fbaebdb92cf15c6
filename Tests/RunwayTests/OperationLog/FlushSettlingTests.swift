import Testing
@testable import Runway

/// When the uploader's view of the queue ends a flush: only once that view saw the flush's
/// events queued and then saw them gone — never from a view read before they were committed.
@Suite("Operation log: what ends a flush", .timeLimit(.minutes(10)))
struct FlushSettlingTests {
    func queued(lowest: Int64?, highest: Int64) -> OperationLogQueue.State {
        OperationLogQueue.State(
            pending: 0, oldestQueued: nil, claimedBatches: [], lowestSequence: lowest, highestSequence: highest,
            lowestQueuedAt: nil)
    }

    @Test("an empty queue read before the flush's event was committed does not end the flush")
    func staleEmptyViewDoesNotSettle() {
        // The flush waits through event 5; the uploader read the queue when 4 was the last ever.
        #expect(!OperationLog.settles(5, in: queued(lowest: nil, highest: 4)))
        // Once a view has seen 5 queued and gone, it ends.
        #expect(OperationLog.settles(5, in: queued(lowest: nil, highest: 5)))
        #expect(OperationLog.settles(5, in: queued(lowest: 6, highest: 9)))
    }

    @Test("a flush ends only when none of its events is left")
    func waitsForItsEvents() {
        #expect(!OperationLog.settles(5, in: queued(lowest: 5, highest: 9)))
        #expect(!OperationLog.settles(5, in: queued(lowest: 3, highest: 9)))
        #expect(OperationLog.settles(0, in: queued(lowest: nil, highest: 0)), "a flush of an empty log ends at once")
    }
}
