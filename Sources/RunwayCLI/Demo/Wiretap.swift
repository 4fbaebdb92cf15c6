import NIOConcurrencyHelpers
import Runway

/// A transport between the engine and the wire that can change a request after it was signed
/// (what an attacker on the path would do) and keeps the last request it sent.
final class Wiretap: Transport, Sendable {
    private let base: any Transport
    private let state = NIOLockedValueBox<(tamper: (@Sendable (inout TransportRequest) -> Void)?, last: TransportRequest?)>((nil, nil))

    init(_ base: any Transport) { self.base = base }

    var honoursCancellation: Bool { base.honoursCancellation }

    /// Changes each request before it is sent; `nil` sends them as signed.
    var tamper: (@Sendable (inout TransportRequest) -> Void)? {
        get { state.withLockedValue { $0.tamper } }
        set { state.withLockedValue { $0.tamper = newValue } }
    }

    /// The last request sent, as it went on the wire.
    var last: TransportRequest? { state.withLockedValue { $0.last } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var request = request
        state.withLockedValue { $0.tamper }?(&request)
        state.withLockedValue { $0.last = request }
        return try await base.send(request)
    }
}
