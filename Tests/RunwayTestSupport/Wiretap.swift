import Foundation
import Runway

/// A transport between the engine and the wire that can change a request after it was signed —
/// what an attacker on the path would do — and keeps every request it sent, as sent. The
/// tests and the demo's signing chapter put it in front of a real transport.
public final class Wiretap: Transport, @unchecked Sendable {
    /// The transport that sends.
    public let inner: any Transport
    private let lock = NSLock()
    private var changing: (@Sendable (inout TransportRequest) -> Void)?
    private var requests: [TransportRequest] = []

    /// A tap in front of `inner` that changes each request with `tamper`, if given.
    public init(_ inner: any Transport, tamper: (@Sendable (inout TransportRequest) -> Void)? = nil) {
        self.inner = inner
        self.changing = tamper
    }

    public var honoursCancellation: Bool { inner.honoursCancellation }

    /// Changes each request before it is sent; `nil` sends them as signed.
    public var tamper: (@Sendable (inout TransportRequest) -> Void)? {
        get { lock.withLock { changing } }
        set { lock.withLock { changing = newValue } }
    }

    /// Every request sent, in order, as it went on the wire.
    public var sent: [TransportRequest] { lock.withLock { requests } }

    /// The last request sent.
    public var last: TransportRequest? { lock.withLock { requests.last } }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        let change = lock.withLock { changing }
        change?(&request)
        lock.withLock { requests.append(request) }
        return try await inner.send(request)
    }
}
