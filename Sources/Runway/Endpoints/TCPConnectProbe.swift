import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How long a TCP handshake with one address takes: a non-blocking `connect` and a `poll` for
/// its end, on a thread of its own (a probe waits up to its timeout, which must not hold one of
/// the few threads Swift concurrency runs on).
enum TCPConnectProbe {
    /// The handshake time to `address` (IPv4 or IPv6) on `port`; `nil` when refused,
    /// unreachable, or not done within `timeout`.
    static func connectTime(to address: String, port: Int, timeout: Duration) async -> Duration? {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: measure(address, port: port, timeout: timeout)) }
            thread.stackSize = 128 * 1024
            thread.start()
        }
    }

    static func measure(_ address: String, port: Int, timeout: Duration) -> Duration? {
        guard let (family, storage, length) = socketAddress(address, port: port) else { return nil }
        #if canImport(Darwin)
        let descriptor = socket(family, SOCK_STREAM, 0)
        #else
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let clock = ContinuousClock()
        let started = clock.now
        var address = storage
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) }
        }
        if status != 0 {
            guard errno == EINPROGRESS else { return nil }
            let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat {
                ready = poll(&request, 1, milliseconds)
            } while ready < 0 && errno == EINTR
            guard ready == 1 else { return nil }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size) == 0, failure == 0 else { return nil }
        }
        return clock.now - started
    }

    /// `address` as a socket address, or `nil` when it is not a numeric IPv4 or IPv6 address.
    static func socketAddress(_ address: String, port: Int) -> (Int32, sockaddr_storage, socklen_t)? {
        guard (0...65_535).contains(port) else { return nil }
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, address, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: v4) { target.copyMemory(from: $0) }
            }
            return (AF_INET, storage, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
        var v6 = sockaddr_in6()
        let bare = address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: v6) { target.copyMemory(from: $0) }
            }
            return (AF_INET6, storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        return nil
    }

    /// Whether `address` is a numeric IPv4 or IPv6 address.
    static func isNumericAddress(_ address: String) -> Bool { socketAddress(address, port: 0) != nil }
}
