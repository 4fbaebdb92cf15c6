/// The current ``NetworkPath`` and its changes (an app must notice network changes,
/// do not wait on a network that is not there, prefer Wi-Fi for work that can wait).
///
/// ``system()`` follows the platform: rtnetlink on Linux (link and address changes), and
/// `NWPathMonitor` on Apple platforms. ``init(path:)`` makes one an app or a test drives with
/// ``update(_:)``. Give it to the ``Engine``: while the path is unreachable, loads fail at once
/// with ``RunwayError/noNetwork(reason:)`` (``RunwayError/NoNetworkReason/unreachable``)
/// instead of waiting out a timeout, loads in flight when it becomes unreachable end the same
/// way at that moment (one its retry policy retries waits the policy's delay for the path),
/// stale-if-offline cache entries answer as usual, operation-log uploads wait, and on the way
/// back endpoint selectors measure again.
public final class NetworkMonitor: Sendable {
    private struct State {
        var path: NetworkPath
        var listeners: [Int: AsyncStream<NetworkPath>.Continuation] = [:]
        var nextListener = 0
        /// Exchanges in flight that end when the path becomes unreachable.
        var losses: [UInt64: @Sendable () -> Void] = [:]
        var nextLoss: UInt64 = 0
        var stop: (@Sendable () -> Void)?
        /// Whether the system's readings still land (``system()`` until ``stop()``).
        var followsSystem = false
    }

    /// An exchange watching for the path to go; ``NetworkMonitor/endWatch(_:)`` ends it.
    struct LossTicket: Sendable {
        fileprivate let id: UInt64
    }

    private let state: Locked<State>

    /// A monitor whose path changes only through ``update(_:)``.
    public init(path: NetworkPath) {
        state = Locked(State(path: path))
    }

    /// A monitor following the system's network: rtnetlink on Linux, `NWPathMonitor` on Apple
    /// platforms. Call ``stop()`` when done.
    public static func system() -> NetworkMonitor {
        #if os(Linux)
        let monitor = NetworkMonitor(path: LinuxNetworkPath.current())
        monitor.follow {
            LinuxNetworkPath.watch { [weak monitor] in monitor?.systemReported(LinuxNetworkPath.current()) }
        }
        return monitor
        #elseif canImport(Network)
        return AppleNetworkPath.monitor()
        #else
        return NetworkMonitor(path: .wired)
        #endif
    }

    /// The path now.
    public var path: NetworkPath { state.withLock { $0.path } }

    /// Every later change of the path, as it happens; each call makes a new stream.
    public func changes() -> AsyncStream<NetworkPath> {
        let (stream, continuation) = AsyncStream<NetworkPath>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = state.withLock { state -> Int in
            state.nextListener += 1
            state.listeners[state.nextListener] = continuation
            return state.nextListener
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets the path; listeners hear of it when it differs from the last one. A path that
    /// becomes unreachable ends the engine's exchanges in flight.
    public func update(_ path: NetworkPath) {
        apply(path, fromSystem: false)
    }

    /// A reading of the system's watcher: it lands only while the monitor follows the system,
    /// so that one read just before ``stop()`` never overwrites a path set after it.
    func systemReported(_ path: NetworkPath) {
        apply(path, fromSystem: true)
    }

    private func apply(_ path: NetworkPath, fromSystem: Bool) {
        let (listeners, losses) = state.withLock { state -> ([AsyncStream<NetworkPath>.Continuation], [@Sendable () -> Void]) in
            if fromSystem, !state.followsSystem { return ([], []) }
            guard state.path != path else { return ([], []) }
            state.path = path
            var losses: [@Sendable () -> Void] = []
            if !path.isReachable {
                losses = Array(state.losses.values)
                state.losses = [:]
            }
            return (Array(state.listeners.values), losses)
        }
        for lost in losses { lost() }
        for listener in listeners { listener.yield(path) }
    }

    /// Calls `lost` once if the path becomes unreachable before ``endWatch(_:)``: how an exchange
    /// in flight learns that its network went away, instead of waiting out its timeout.
    ///
    /// - returns: `nil`, without calling `lost`, when the path is unreachable already.
    func watchLoss(_ lost: @escaping @Sendable () -> Void) -> LossTicket? {
        state.withLock { state in
            guard state.path.isReachable else { return nil }
            state.nextLoss &+= 1
            state.losses[state.nextLoss] = lost
            return LossTicket(id: state.nextLoss)
        }
    }

    /// Stops watching.
    ///
    /// - returns: Whether the path went away first (`lost` was called, or is running).
    @discardableResult
    func endWatch(_ ticket: LossTicket) -> Bool {
        state.withLock { $0.losses.removeValue(forKey: ticket.id) } == nil
    }

    /// Waits until the path satisfies `condition` or `limit` has passed, whichever is first.
    ///
    /// What work that can wait uses: an upload that prefers a path that is not expensive, but
    /// not for longer than an hour.
    ///
    /// - returns: Whether the path satisfies `condition` now.
    @discardableResult
    public func wait(until condition: @escaping @Sendable (NetworkPath) -> Bool, atMost limit: Duration) async -> Bool {
        await wait(until: condition) { try? await Task.sleep(for: limit) }
    }

    /// Waits until the path satisfies `condition` or `timer` returns, whichever is first.
    func wait(
        until condition: @escaping @Sendable (NetworkPath) -> Bool, timer: @escaping @Sendable () async -> Void
    ) async -> Bool {
        let stream = changes()
        if condition(path) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await path in stream where condition(path) { return true }
                return false
            }
            group.addTask {
                await timer()
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first || condition(self.path)
        }
    }

    /// Stops following the system; the path stays as it was.
    public func stop() {
        let (stop, listeners) = state.withLock { state in
            defer {
                state.stop = nil
                state.followsSystem = false
                state.listeners = [:]
            }
            return (state.stop, Array(state.listeners.values))
        }
        stop?()
        for listener in listeners { listener.finish() }
    }

    deinit {
        state.withLock { $0.stop }?()
    }

    /// Follows the system's readings until ``stop()``: `start` starts the watcher (its readings
    /// land from then on) and returns what stops it.
    func follow(_ start: () -> @Sendable () -> Void) {
        state.withLock { $0.followsSystem = true }
        let stop = start()
        state.withLock { $0.stop = stop }
    }
}
