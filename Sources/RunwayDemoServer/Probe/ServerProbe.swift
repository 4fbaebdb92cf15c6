import NIOConcurrencyHelpers

/// What the server saw, for tests to assert on: requests per route and key, and the requests
/// whose connection the client closed while the server held them.
///
/// Tests await events (a held request arrived, its connection closed) instead of sleeping.
public final class ServerProbe: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var holdsStarted = 0
        var holdsClosed = 0
        var gatesWaiting = 0
        var openGates: Set<String> = []
        var gateWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var waiters: [(id: Int, kind: Event, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
    }

    /// Something a test can wait for.
    public enum Event: Sendable {
        /// A request reached the hold endpoint.
        case holdStarted
        /// The client closed the connection of a held request.
        case holdClosed
        /// A request reached a closed gate and waits for it to open.
        case gateWaiting
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// How many requests arrived for `key` (a route, or a route plus a test's own key).
    public func count(_ key: String) -> Int { state.withLockedValue { $0.counts[key, default: 0] } }

    /// How many times `event` has happened so far: what to add to when waiting for the next.
    public func count(of event: Event) -> Int { state.withLockedValue { Self.total(of: event, in: $0) } }

    /// Counts one request for `key` and returns the new count.
    @discardableResult
    func record(_ key: String) -> Int {
        state.withLockedValue { state in
            state.counts[key, default: 0] += 1
            return state.counts[key, default: 0]
        }
    }

    func signal(_ event: Event) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            switch event {
            case .holdStarted: state.holdsStarted += 1
            case .holdClosed: state.holdsClosed += 1
            case .gateWaiting: state.gatesWaiting += 1
            }
            let snapshot = state
            let isReached = { (waiter: (id: Int, kind: Event, count: Int, continuation: CheckedContinuation<Void, Never>)) in
                Self.total(of: waiter.kind, in: snapshot) >= waiter.count
            }
            let reached = state.waiters.filter(isReached)
            state.waiters.removeAll(where: isReached)
            return reached.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    private static func total(of event: Event, in state: State) -> Int {
        switch event {
        case .holdStarted: return state.holdsStarted
        case .holdClosed: return state.holdsClosed
        case .gateWaiting: return state.gatesWaiting
        }
    }

    /// Opens gate `key`: requests waiting at it are answered, and later ones pass at once.
    public func openGate(_ key: String) {
        let waiting = state.withLockedValue { state in
            state.openGates.insert(key)
            return state.gateWaiters.removeValue(forKey: key) ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits at gate `key` until a test opens it.
    func passGate(_ key: String) async {
        await withCheckedContinuation { continuation in
            let open = state.withLockedValue { state -> Bool in
                if state.openGates.contains(key) { return true }
                state.gateWaiters[key, default: []].append(continuation)
                return false
            }
            if open { continuation.resume() }
            signal(.gateWaiting)
        }
    }

    /// Waits until `event` has happened `count` times in all, or until the waiting task is
    /// cancelled (a test's time limit cancels it, so a lost event fails that test instead of
    /// hanging the whole run).
    public func wait(for event: Event, count: Int = 1) async {
        let id = state.withLockedValue { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLockedValue { state -> Bool in
                    if Self.total(of: event, in: state) >= count || Task.isCancelled { return true }
                    state.waiters.append((id, event, count, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }
}
