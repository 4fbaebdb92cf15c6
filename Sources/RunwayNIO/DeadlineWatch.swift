import NIOConcurrencyHelpers
import NIOCore

/// One event-loop timer for the deadlines of every exchange of a transport.
///
/// A timer per exchange, scheduled and cancelled from the calling thread, wakes the event loop's
/// thread twice per request; on a two-core machine that was a third of a request's context
/// switches. The watch keeps a timer armed no later than the earliest deadline it holds: an
/// exchange starts and stops watching under a lock, and the event loop is asked for a new timer
/// only when a deadline is earlier than every armed one (the first exchange, or a shorter
/// timeout). A timer that fires expires what is due and arms the next one from the loop itself.
final class DeadlineWatch: Sendable {
    private struct Watched {
        var deadline: NIODeadline
        var expire: @Sendable () -> Void
    }

    private struct State {
        var watched: [UInt64: Watched] = [:]
        var nextID: UInt64 = 0
        /// When the timers asked for and not yet fired will fire. Invariant: every watched
        /// deadline has one of these at or before it.
        var armed: [NIODeadline] = []
    }

    /// A watched deadline; ``DeadlineWatch/stop(_:)`` ends it.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
    }

    private let state = NIOLockedValueBox(State())
    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Calls `expire` once, on the event loop, when `deadline` passes before ``stop(_:)``.
    func watch(until deadline: NIODeadline, expire: @escaping @Sendable () -> Void) -> Ticket {
        let (id, arms) = state.withLockedValue { state -> (UInt64, Bool) in
            let id = state.nextID
            state.nextID &+= 1
            state.watched[id] = Watched(deadline: deadline, expire: expire)
            guard !state.armed.contains(where: { $0 <= deadline }) else { return (id, false) }
            state.armed.append(deadline)
            return (id, true)
        }
        if arms { arm(at: deadline) }
        return Ticket(id: id)
    }

    /// Stops watching. Unless the deadline had already passed (its `expire` may then be running),
    /// `expire` is never called.
    func stop(_ ticket: Ticket) {
        _ = state.withLockedValue { $0.watched.removeValue(forKey: ticket.id) }
    }

    private func arm(at deadline: NIODeadline) {
        eventLoop.scheduleTask(deadline: deadline) { [weak self] in self?.fire() }
    }

    private func fire() {
        let now = NIODeadline.now()
        let (due, next) = state.withLockedValue { state -> ([Watched], NIODeadline?) in
            state.armed.removeAll { $0 <= now }
            let dueIDs = state.watched.filter { $0.value.deadline <= now }.map(\.key)
            let due = dueIDs.compactMap { state.watched.removeValue(forKey: $0) }
            guard let earliest = state.watched.values.map(\.deadline).min(),
                !state.armed.contains(where: { $0 <= earliest })
            else { return (due, nil) }
            state.armed.append(earliest)
            return (due, earliest)
        }
        if let next { arm(at: next) }
        for watched in due { watched.expire() }
    }
}
