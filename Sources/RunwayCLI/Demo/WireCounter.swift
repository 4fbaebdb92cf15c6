import NIOConcurrencyHelpers
import Runway

/// A transport that counts what reaches the wire, around the real one: the demo's figures of
/// "requests sent" are the client's own, so they hold against a server in another process too.
struct WireCounter: Transport {
    let base: any Transport
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    init(_ base: any Transport) { self.base = base }

    var honoursCancellation: Bool { base.honoursCancellation }
    var supportsConnectAddress: Bool { base.supportsConnectAddress }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        counts.withLockedValue { $0[request.apiName, default: 0] += 1 }
        return try await base.send(request)
    }

    /// Requests sent for the API named `apiName`.
    func count(_ apiName: String) -> Int { counts.withLockedValue { $0[apiName, default: 0] } }

    /// Requests sent in all.
    var total: Int { counts.withLockedValue { $0.values.reduce(0, +) } }
}
