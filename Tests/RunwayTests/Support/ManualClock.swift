import Foundation
import Runway

/// A clock that moves only when the test moves it, and counts how often it was read: code timed
/// on it measures what the test decides, however busy the machine is.
final class ManualClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var reads = 0
        var readWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = TestBox(State())

    var now: Instant {
        let (instant, ready) = state.mutate { state -> (Instant, [CheckedContinuation<Void, Never>]) in
            state.reads += 1
            let reads = state.reads
            let ready = state.readWaiters.filter { $0.count <= reads }.map(\.continuation)
            state.readWaiters.removeAll { $0.count <= reads }
            return (state.now, ready)
        }
        for continuation in ready { continuation.resume() }
        return instant
    }

    var minimumResolution: Duration { .nanoseconds(1) }

    /// Not used by the code under test: waits as the continuous clock would.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await Task.sleep(for: now.duration(to: deadline))
    }

    /// Sets the time.
    func set(_ offset: Duration) {
        state.mutate { $0.now = Instant(offset: offset) }
    }

    /// Returns once the clock has been read `count` times in all.
    func waitForReads(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.mutate { state -> Bool in
                guard state.reads < count else { return true }
                state.readWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
