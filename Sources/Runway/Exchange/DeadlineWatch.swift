import Dispatch

/// One timer for the deadlines of every exchange of an engine: the single place a deadline is
/// kept, whatever the transport.
///
/// A timer per exchange, made and cancelled from the calling thread, wakes a timer thread twice
/// per request; on a two-core machine that was a third of a request's context switches. The
/// watch keeps one timer armed no later than the earliest deadline it holds: an exchange starts
/// and stops watching under a lock, and the timer is moved only when a deadline is earlier than
/// the armed one (the first exchange, or a shorter timeout). When the timer fires, it expires
/// what is due and arms itself for the next deadline.
final class DeadlineWatch: @unchecked Sendable {
    private struct Watched {
        var deadline: ContinuousClock.Instant
        var expire: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextID: UInt64 = 0
        /// When the timer will fire; `nil` while it is not armed. Invariant: every watched
        /// deadline is at or after it.
        var armed: ContinuousClock.Instant?
    }

    /// A watched deadline; ``DeadlineWatch/stop(_:)`` ends it.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
    }

    private let state = Locked(State())
    /// Set up once in `init` and only rescheduled afterwards, always under `state`'s lock
    /// (`DispatchSourceTimer` is thread-safe, but not declared `Sendable`): hence `@unchecked`.
    private let timer: any DispatchSourceTimer
    /// How late a deadline may be noticed: a timeout is not a metronome, and the slack lets the
    /// system coalesce wake-ups.
    private static let leeway = DispatchTimeInterval.milliseconds(5)

    init() {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "runway.deadlines"))
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.activate()
    }

    deinit {
        timer.setEventHandler {}
        timer.cancel()
    }

    /// Calls `expire` once, on the watch's queue, when `deadline` passes before ``stop(_:)``.
    func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> Ticket {
        state.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            state.watched[id] = Watched(deadline: deadline, expire: expire)
            if state.armed.map({ deadline < $0 }) ?? true {
                state.armed = deadline
                arm(at: deadline)
            }
            return Ticket(id: id)
        }
    }

    /// Stops watching; `expire` is not called afterwards.
    ///
    /// - returns: Whether the deadline had passed first (its `expire` was called, or is running).
    @discardableResult
    func stop(_ ticket: Ticket) -> Bool {
        state.withLock { $0.watched.removeValue(forKey: ticket.id) } == nil
    }

    /// Moves the timer to `deadline`; called under the lock.
    private func arm(at deadline: ContinuousClock.Instant) {
        timer.schedule(deadline: Self.dispatchTime(in: deadline - .now, from: .now()), repeating: .never, leeway: Self.leeway)
    }

    /// The dispatch time `remaining` after `now`: none before `now`, none past a year from it (as
    /// good as never). Counted in `UInt64` nanoseconds, never `Int`: where `Int` has 32 bits (an
    /// arm64_32 Apple Watch), `DispatchTimeInterval.nanoseconds(Int(…))` stops the process for
    /// any wait past 2.1 s — every exchange's deadline.
    static func dispatchTime(in remaining: Duration, from now: DispatchTime) -> DispatchTime {
        let bounded = min(max(remaining, .zero), .seconds(365 * 86_400))
        let nanoseconds = UInt64(bounded.components.seconds) * 1_000_000_000
            + UInt64(bounded.components.attoseconds / 1_000_000_000)
        return DispatchTime(uptimeNanoseconds: now.uptimeNanoseconds + nanoseconds)
    }

    private func fire() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [Watched] in
            var due: [Watched] = []
            var earliest: ContinuousClock.Instant?
            for (id, watched) in state.watched {
                if watched.deadline <= now {
                    due.append(watched)
                    state.watched[id] = nil
                } else if earliest.map({ watched.deadline < $0 }) ?? true {
                    earliest = watched.deadline
                }
            }
            state.armed = earliest
            if let earliest { arm(at: earliest) }
            return due
        }
        for watched in due { watched.expire() }
    }
}
