import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to a port on 127.0.0.1 and never listening.
///
/// While it is held, a connection to its port is refused by the kernel (a reset to the SYN), and no
/// other socket in the process — a test server started meanwhile, say — can take the port. That
/// makes it the reliable "nothing listens here" for tests running in parallel: a server that was
/// started and stopped leaves a port that the next server may get, and whose listener may still be
/// closing when the client connects.
public final class LoopbackSocket: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    private let descriptor: Int32

    /// Binds `port` on 127.0.0.1; 0 (the default) lets the kernel choose a free one.
    public init(port: Int = 0) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            Self.close(descriptor)
            throw Failure(description: "cannot bind 127.0.0.1:\(port): errno \(errno)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// A loopback port nothing listens on now, below the kernel's ephemeral range (32768 and up
    /// on Linux), so that the suite's own outgoing connections do not take it meanwhile: for a
    /// server a test starts on a port of its choosing (PostgreSQL, nginx, `runway serve --port`).
    ///
    /// Never the same port twice in one process: a port is free only until its test starts its
    /// server, and two tests in parallel handed one port would send their requests to each
    /// other's servers (one test's "nobody listens" answered by the other's server).
    public static func freePort() throws -> Int {
        for _ in 0..<100 {
            let candidate = Int.random(in: 20_000..<32_000)
            let fresh = handedOut.mutate { $0.insert(candidate).inserted }
            guard fresh, let socket = try? LoopbackSocket(port: candidate) else { continue }
            socket.close()
            return socket.port
        }
        throw Failure(description: "no free loopback port between 20000 and 32000")
    }

    /// The ports ``freePort()`` has handed out in this process.
    private static let handedOut = TestBox<Set<Int>>([])

    /// `http://127.0.0.1:PORT`: a base URL whose connections are refused while the socket is held.
    public var refusingBaseURL: String { "http://127.0.0.1:\(port)" }

    /// Gives the port back.
    public func close() {
        Self.close(descriptor)
    }

    private static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
