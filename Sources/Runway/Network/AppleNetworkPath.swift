#if canImport(Network) && !os(Linux)
import Dispatch
import Network

/// The network path on Apple platforms, from `NWPathMonitor`.
enum AppleNetworkPath {
    static func monitor() -> NetworkMonitor {
        let pathMonitor = NWPathMonitor()
        // `currentPath` means nothing before `start` (it reads as unsatisfied). Until the first
        // update, which follows `start` at once, nothing is known: no load may fail for that.
        let monitor = NetworkMonitor(path: NetworkPath(isReachable: true, interfaces: []))
        pathMonitor.pathUpdateHandler = { [weak monitor] update in monitor?.systemReported(path(of: update)) }
        let running = RunningMonitor(pathMonitor)
        monitor.follow {
            pathMonitor.start(queue: DispatchQueue(label: "runway.network-monitor"))
            return { running.monitor.cancel() }
        }
        return monitor
    }

    /// Carries the path monitor into the stop closure (cancelling it is safe from any thread).
    final class RunningMonitor: @unchecked Sendable {
        let monitor: NWPathMonitor
        init(_ monitor: NWPathMonitor) { self.monitor = monitor }
    }

    static func path(of path: NWPath) -> NetworkPath {
        var kinds: [NetworkPath.Interface] = []
        for (type, kind) in [
            (NWInterface.InterfaceType.wiredEthernet, NetworkPath.Interface.wired), (.wifi, .wifi), (.cellular, .cellular),
            (.other, .other),
        ] where path.usesInterfaceType(type) {
            kinds.append(kind)
        }
        // `.requiresConnection` is a path that connecting brings up (an on-demand VPN, a
        // cellular modem waking): not offline, or a load would never wake it.
        return NetworkPath(
            isReachable: path.status != .unsatisfied, interfaces: kinds, isExpensive: path.isExpensive,
            isConstrained: path.isConstrained)
    }
}
#endif
