import Dispatch
import HTTPTypes
import NIOCore
import Runway

/// Hands an answer to a sink that may block (a download's file, an app's sink) on a dispatch
/// queue of its own, without waiting for each chunk: the task reading the body goes on reading
/// while the queue writes, and waits only when more than ``backlog`` bytes wait to be written.
///
/// A hop and a wait for every chunk (a ``BlockingLane`` step each) made a 64 MiB download
/// 30–50 % slower than writing in the reading task; this way the queue takes every chunk that
/// arrived while it wrote the last in one go, and a thread of Swift's pool never waits for the
/// disk.
final class SinkFeed: Sendable {
    /// Bytes that may wait for the sink before the reading task waits for it: enough to keep the
    /// queue busy between two reads, little enough to bound a download's memory.
    static let backlog = 1 << 20

    private enum Step {
        case begin(HTTPResponse)
        case write(ByteBuffer)
    }

    /// What the reading task waits for.
    private enum Awaited {
        /// Room: no more than ``backlog`` bytes waiting.
        case room
        /// Every step taken.
        case drained
    }

    private struct State {
        var steps: [Step] = []
        var waitingBytes = 0
        var draining = false
        var failure: (any Error)?
        var waiter: (awaited: Awaited, continuation: CheckedContinuation<Void, Never>)?

        /// The waiter, taken, if what it waits for has come (or a step failed).
        mutating func waiterToResume() -> CheckedContinuation<Void, Never>? {
            guard let waiter else { return nil }
            let met =
                switch waiter.awaited {
                case .room: waitingBytes <= SinkFeed.backlog || failure != nil
                case .drained: !draining
                }
            guard met else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
    }

    private let sink: any ResponseSink
    private let queue: DispatchQueue
    private let state = Locked(State())

    /// A feed of `sink` on `lane`'s queue.
    init(sink: any ResponseSink, lane: BlockingLane) {
        self.sink = sink
        self.queue = lane.queue
    }

    /// The head, to the sink's ``ResponseSink/begin(_:)`` after what came before it.
    ///
    /// - throws: What an earlier step threw: the answer is not wanted.
    func begin(_ head: HTTPResponse) async throws {
        try await add(.begin(head), bytes: 0)
    }

    /// The next chunk, to the sink's ``ResponseSink/write(_:)``; waits only while more than
    /// ``backlog`` bytes wait.
    ///
    /// - throws: What an earlier step threw: the answer is not wanted.
    func write(_ chunk: ByteBuffer) async throws {
        try await add(.write(chunk), bytes: chunk.readableBytes)
    }

    /// Waits until every step was taken.
    ///
    /// - throws: What a step threw.
    func finish() async throws {
        await wait(for: .drained)
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Waits until every step handed in was taken or dropped after a failure, whatever happened:
    /// the sink is the next attempt's once the exchange ends, never this one's still.
    func settle() async {
        await wait(for: .drained)
    }

    private func add(_ step: Step, bytes: Int) async throws {
        let (start, full, failure) = state.withLock { state -> (Bool, Bool, (any Error)?) in
            if let failure = state.failure { return (false, false, failure) }
            state.steps.append(step)
            state.waitingBytes += bytes
            defer { state.draining = true }
            return (!state.draining, state.waitingBytes > Self.backlog, nil)
        }
        if let failure { throw failure }
        if start { queue.async { self.drain() } }
        if full {
            await wait(for: .room)
            if let failure = state.withLock({ $0.failure }) { throw failure }
        }
    }

    private func wait(for awaited: Awaited) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resume = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.waiter = (awaited, continuation)
                return state.waiterToResume()
            }
            resume?.resume()
        }
    }

    /// On the queue: takes every waiting step, in order, until none waits.
    private func drain() {
        while true {
            let steps = state.withLock { state -> [Step] in
                defer { state.steps = [] }
                return state.steps
            }
            var failure: (any Error)?
            var written = 0
            for step in steps where failure == nil {
                do {
                    switch step {
                    case .begin(let head):
                        try sink.begin(head)
                    case .write(let chunk):
                        try chunk.withUnsafeReadableBytes { try sink.write($0) }
                        written += chunk.readableBytes
                    }
                } catch {
                    failure = error
                }
            }
            let (resume, more) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
                state.waitingBytes -= written
                if let failure {
                    // What waits after a failure is not wanted: dropped, and the reader told.
                    state.failure = state.failure ?? failure
                    state.steps = []
                    state.waitingBytes = 0
                }
                state.draining = !state.steps.isEmpty
                return (state.waiterToResume(), state.draining)
            }
            resume?.resume()
            guard more else { return }
        }
    }
}
