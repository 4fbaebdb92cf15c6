import AsyncHTTPClient
import NIOCore
import Runway

/// The clients a transport makes on demand: one per chosen address (connections go there
/// instead of resolving the host, the least recently used evicted past a limit) and one per set
/// of pins, each checking every new connection after its TLS handshake.
extension AsyncHTTPClientTransport {
    /// What a client made on demand is for.
    struct ClientKey: Hashable {
        var host: String
        /// The address connections go to instead of resolving the host.
        var address: String?
        var pins: PublicKeyPins?
    }

    /// The client for a request to `host` that connects to `address` (or resolves the host) and
    /// checks `pins`; the shared client when it does neither. A made client keeps the transport's
    /// settings; `dnsOverride` maps the host to the address, so the `Host` field, SNI and
    /// certificate validation stay on the host name.
    func client(for host: String, connectingTo address: String?, pins: PublicKeyPins?) throws -> HTTPClient {
        guard address != nil || pins != nil else { return client }
        // The host matters only to an address override; pins name their host themselves.
        let key = ClientKey(host: address == nil ? "" : host, address: address, pins: pins)
        if address != nil { touch(key) }
        return try madeClients.withLockedValue { clients in
            if let client = clients[key] { return client }
            guard !isShutDown.withLockedValue({ $0 }) else {
                throw TransportFault.shutDown
            }
            var clientConfiguration = Self.clientConfiguration(connections)
            let nameCheck = address.map { _ in HostNameCheck(host: host) }
            let pinCheck = pins.map(PinCheck.init)
            // AsyncHTTPClient runs these once per new connection, after the TLS handshake and the
            // usual chain validation, and fails the connection (and so the request) if they fail.
            let verify: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                let named = nameCheck?.verify(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
                return named.flatMap { pinCheck?.verify(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
            }
            clientConfiguration.http1_1ConnectionDebugInitializer = verify
            clientConfiguration.http2ConnectionDebugInitializer = verify
            if let address {
                clientConfiguration.dnsOverride = [host: address.hasPrefix("[") ? String(address.dropFirst().dropLast()) : address]
            }
            let client = HTTPClient(eventLoopGroupProvider: .shared(self.client.eventLoopGroup), configuration: clientConfiguration)
            clients[key] = client
            if address != nil {
                for evicted in evictAddressClients(beyond: max(connections.maximumAddressClients, 1)) {
                    clients.removeValue(forKey: evicted)?.shutdown { _ in }
                }
            }
            return client
        }
    }

    /// Moves `key` to the most recently used end of the address clients' order.
    private func touch(_ key: ClientKey) {
        addressClientOrder.withLockedValue { order in
            order.removeAll { $0 == key }
            order.append(key)
        }
    }

    /// The least recently used address clients past `limit`, removed from the order.
    private func evictAddressClients(beyond limit: Int) -> [ClientKey] {
        addressClientOrder.withLockedValue { order in
            guard order.count > limit else { return [] }
            let evicted = Array(order.prefix(order.count - limit))
            order.removeFirst(order.count - limit)
            return evicted
        }
    }

    /// How many clients for chosen addresses the transport keeps now.
    var addressClientCount: Int { madeClients.withLockedValue { $0.keys.filter { $0.address != nil }.count } }
}
