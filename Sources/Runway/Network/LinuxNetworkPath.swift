#if os(Linux)
import Foundation
import Glibc

/// The network path on Linux: interfaces from `getifaddrs`, changes from an rtnetlink socket
/// subscribed to link, address and route events (what `ip monitor` listens to).
enum LinuxNetworkPath {
    /// The path now: reachable when an interface other than loopback is up and running and has
    /// an IPv4 address or a global IPv6 address.
    ///
    /// Routes do not decide it: a link with no default route still reaches its own subnet (a
    /// server on the same LAN, a device over a direct cable), so "no default route" is not
    /// "offline". Whether a route reaches a particular destination the kernel answers when the
    /// transport connects — at once, with `ENETUNREACH`, which the load meets as
    /// `noNetwork(.unreachable)` — so a load without a way out still fails fast, and one with
    /// a way goes.
    static func current() -> NetworkPath {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return .unreachable }
        defer { freeifaddrs(list) }
        var kinds: [NetworkPath.Interface] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = entry.pointee.ifa_flags
            guard flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_RUNNING) != 0, flags & UInt32(IFF_LOOPBACK) == 0,
                let address = entry.pointee.ifa_addr, isRoutable(address)
            else { continue }
            let kind = kind(of: String(cString: entry.pointee.ifa_name))
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        let order: [NetworkPath.Interface] = [.wired, .wifi, .other, .cellular]
        kinds.sort { (order.firstIndex(of: $0) ?? 0) < (order.firstIndex(of: $1) ?? 0) }
        return NetworkPath(
            isReachable: !kinds.isEmpty, interfaces: kinds,
            isExpensive: !kinds.isEmpty && kinds.allSatisfy { $0 == .cellular })
    }

    private static func isRoutable(_ address: UnsafeMutablePointer<sockaddr>) -> Bool {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return true
        case AF_INET6:
            // fe80::/10 is link-local: every up interface has one, routable or not.
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                let bytes = withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }
                return !(bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80)
            }
        default:
            return false
        }
    }

    /// Wi-Fi when the kernel lists the interface as wireless; cellular for modems (`wwan*`).
    private static func kind(of name: String) -> NetworkPath.Interface {
        if FileManager.default.fileExists(atPath: "/sys/class/net/\(name)/wireless") { return .wifi }
        if name.hasPrefix("wwan") { return .cellular }
        if FileManager.default.fileExists(atPath: "/sys/class/net/\(name)/device") || name.hasPrefix("e") { return .wired }
        return .other
    }

    /// The layout of `struct sockaddr_nl` (linux/netlink.h), which Glibc's module does not export.
    private struct NetlinkAddress {
        var family: sa_family_t = sa_family_t(AF_NETLINK)
        var pad: UInt16 = 0
        var pid: UInt32 = 0
        var groups: UInt32 = 0
    }

    /// rtnetlink multicast groups (linux/rtnetlink.h).
    private static let linkGroup: UInt32 = 0x1
    private static let ipv4AddressGroup: UInt32 = 0x10
    private static let ipv6AddressGroup: UInt32 = 0x100
    private static let ipv4RouteGroup: UInt32 = 0x40
    private static let ipv6RouteGroup: UInt32 = 0x400

    /// Calls `onChange` after each burst of link, address or route events, on a thread of its own,
    /// until the returned function is called. Without netlink (a sandbox that refuses the
    /// socket) nothing is called: the path stays as first read.
    static func watch(_ onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue), 0)  // NETLINK_ROUTE is 0
        guard descriptor >= 0 else { return {} }
        var address = NetlinkAddress(groups: linkGroup | ipv4AddressGroup | ipv6AddressGroup | ipv4RouteGroup | ipv6RouteGroup)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<NetlinkAddress>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            return {}
        }
        let stopped = Locked(false)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while !stopped.withLock({ $0 }) {
                var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                // A short poll so that stopping never waits long.
                guard poll(&request, 1, 200) == 1 else { continue }
                // Drain the burst (an address change brings several messages), then read once.
                while recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
                onChange()
            }
            close(descriptor)
        }
        thread.stackSize = 256 * 1024
        thread.start()
        return { stopped.withLock { $0 = true } }
    }
}
#endif
