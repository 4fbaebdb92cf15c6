#if canImport(FoundationNetworking)
import Dispatch
import Foundation
import FoundationNetworking
@testable import Runway
import Synchronization
import Testing

/// The delegate queue of ``URLSessionTransport``'s session on Linux.
@Suite("URLSession transport: the delegate queue on Linux", .timeLimit(.minutes(1)))
struct DispatchedDelegateQueueTests {
    /// What the blocks saw: the order they ran in, and whether two ever ran at once.
    struct Seen {
        var order: [Int] = []
        var running = false
        var overlapped = false
        /// What the blocks' work added up to (kept, so that the work is done).
        var sum = 0
    }

    @Test("the session calls its delegate on the dispatched queue")
    func sessionUsesIt() {
        let transport = URLSessionTransport()
        #expect(transport.session.delegateQueue is DispatchedDelegateQueue)
    }

    @Test("blocks run one at a time, in the order they were added")
    func serialAndInOrder() async {
        let queue = DispatchedDelegateQueue()
        let seen = Mutex(Seen())
        let count = 5_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for n in 0..<count {
                queue.addOperation {
                    seen.withLock {
                        if $0.running { $0.overlapped = true }
                        $0.running = true
                    }
                    // A little work between the marks, so that blocks run at once would overlap.
                    var spin = 0
                    for step in 0..<200 { spin &+= step }
                    seen.withLock {
                        $0.order.append(n)
                        $0.sum &+= spin
                        $0.running = false
                    }
                    if n == count - 1 { done.resume() }
                }
            }
        }
        let (order, overlapped) = seen.withLock { ($0.order, $0.overlapped) }
        #expect(!overlapped)
        #expect(order.count == count)
        #expect(order.indices.first { order[$0] != $0 } == nil, "the first block out of its place")
    }
}
#endif
