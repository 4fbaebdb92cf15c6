/// The bookkeeping of a manager's in-flight loads: which fly, who waits for each, and what a
/// new load does under the API's ``RequestStrategy``.
///
/// A plain state machine: it does no I/O and returns what the manager must do, so every rule
/// (exactly one delivery per load, strategies, cancellation) is unit-tested on its own.
struct LoadBook<Waiter, Context> {
    /// One in-flight load.
    struct Entry {
        /// What the manager keeps about the load (its call, its page).
        var context: Context
        /// Whether the delegate receives this load's outcome (`loadData`), or only waiters (`load`).
        var notifiesDelegate: Bool
        /// The awaiting callers.
        var waiters: [Waiter]
        /// Whether a later load may join this one (``RequestStrategy/ignoreNewWhileLoading``).
        /// A load that runs in its caller's task may not: the caller's cancellation would end it
        /// for those who joined.
        var joinable = true
    }

    /// What the manager must do for a new load.
    enum Admission: Equatable {
        /// Send the load; first deliver ``RunwayError/cancelled`` to, and cancel, these loads.
        case start(cancelling: [LoadID])
        /// Do not send: the in-flight load `LoadID` serves this one (its outcome also goes to the
        /// joiner's waiter or, for a delegate load, to the delegate).
        case join(LoadID)
    }

    private(set) var entries: [LoadID: Entry] = [:]
    /// Start order, so that "the in-flight load" is well defined.
    private(set) var order: [LoadID] = []

    var isEmpty: Bool { entries.isEmpty }
    var inFlight: [LoadID] { order }

    /// Admits load `id` under `strategy`.
    ///
    /// For ``Admission/start(cancelling:)`` the new load is recorded, and the loads it
    /// supersedes are finished and handed back: the caller delivers ``RunwayError/cancelled`` to
    /// them. For ``Admission/join(_:)`` the waiter (if any) joins the in-flight load: the first
    /// one started that is joinable (one started under another strategy, before the API's
    /// strategy changed, may not be).
    mutating func admit(
        _ id: LoadID, context: Context, strategy: RequestStrategy, notifiesDelegate: Bool, waiter: Waiter?,
        joinable: Bool = true
    ) -> (Admission, cancelled: [(LoadID, Entry)]) {
        switch strategy {
        case .ignoreNewWhileLoading:
            if let current = order.first(where: { entries[$0]?.joinable == true }) {
                // The joiner is served by the in-flight load: its waiter, or the delegate, is
                // added to that load's deliveries.
                if let waiter { entries[current]?.waiters.append(waiter) }
                if notifiesDelegate { entries[current]?.notifiesDelegate = true }
                return (.join(current), [])
            }
        case .cancelInFlight:
            let superseded = order.compactMap { old in finish(old).map { (old, $0) } }
            record(id, context: context, notifiesDelegate: notifiesDelegate, waiter: waiter, joinable: joinable)
            return (.start(cancelling: superseded.map(\.0)), superseded)
        case .allowConcurrent:
            break
        }
        record(id, context: context, notifiesDelegate: notifiesDelegate, waiter: waiter, joinable: joinable)
        return (.start(cancelling: []), [])
    }

    private mutating func record(
        _ id: LoadID, context: Context, notifiesDelegate: Bool, waiter: Waiter?, joinable: Bool
    ) {
        entries[id] = Entry(
            context: context, notifiesDelegate: notifiesDelegate, waiters: waiter.map { [$0] } ?? [], joinable: joinable)
        order.append(id)
    }

    /// Ends load `id`, handing back who must receive its outcome; `nil` when it already ended
    /// (so its outcome must be dropped: it was delivered as cancelled).
    mutating func finish(_ id: LoadID) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        order.removeAll { $0 == id }
        return entry
    }

    /// Removes every load, handing back all of them to be delivered as cancelled.
    mutating func finishAll() -> [(LoadID, Entry)] {
        let all = order.compactMap { id in entries[id].map { (id, $0) } }
        entries.removeAll()
        order.removeAll()
        return all
    }
}

extension LoadBook.Entry: Sendable where Waiter: Sendable, Context: Sendable {}

extension LoadBook {
    /// Removes `waiter` from whichever load it waits on.
    ///
    /// - returns: The load to cancel, when that load now has nobody left to deliver to.
    mutating func abandon(where matches: (Waiter) -> Bool) -> LoadID? {
        for id in order {
            guard var entry = entries[id], entry.waiters.contains(where: matches) else { continue }
            entry.waiters.removeAll(where: matches)
            entries[id] = entry
            return entry.waiters.isEmpty && !entry.notifiesDelegate ? id : nil
        }
        return nil
    }
}
