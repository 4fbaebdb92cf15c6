import Foundation
import Runway

/// A clock that moves only when the test moves it, and counts how often it was read and how
/// many sleeps began on it: code timed or scheduled on it measures and waits what the test
/// decides, however busy the machine is.
public final class ManualClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var reads = 0
        var readWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var sleepers: [Int: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var cancelledSleeps: Set<Int> = []
        var sleepsBegun = 0
        /// Sleeps that have reached the clock (waiting, or over at once).
        var sleepsRegistered = 0
        var sleepWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = TestBox(State())

    public init() {}

    public var now: Instant {
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

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Returns once the test has moved the clock to `deadline` or past it; throws
    /// `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.mutate { state -> Int in
            state.sleepsBegun += 1
            return state.sleepsBegun
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, begun) = state.mutate { state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    state.sleepsRegistered += 1
                    let registered = state.sleepsRegistered
                    let begun = state.sleepWaiters.filter { $0.count <= registered }.map(\.continuation)
                    state.sleepWaiters.removeAll { $0.count <= registered }
                    if state.cancelledSleeps.remove(id) != nil { return (.failure(CancellationError()), begun) }
                    if deadline <= state.now { return (.success(()), begun) }
                    state.sleepers[id] = (deadline, continuation)
                    return (nil, begun)
                }
                for waiter in begun { waiter.resume() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.mutate { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper == nil { state.cancelledSleeps.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Sets the time; sleeps that are due end.
    public func set(_ offset: Duration) {
        let due = state.mutate { state -> [CheckedContinuation<Void, any Error>] in
            state.now = Instant(offset: offset)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for sleeper in due { sleeper.resume() }
    }

    /// Moves the time on by `duration`; sleeps that are due end.
    public func advance(by duration: Duration) {
        set(state.mutate { $0.now.offset } + duration)
    }

    /// Returns once `count` sleeps in all have reached this clock (and wait, or are over).
    public func waitForSleeps(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.mutate { state -> Bool in
                guard state.sleepsRegistered < count else { return true }
                state.sleepWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Returns once the clock has been read `count` times in all.
    public func waitForReads(_ count: Int) async {
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
