import AsyncHTTPClient
import NIOCore
import Runway

/// The clients a transport makes on demand: one per chosen address (connections go there
/// instead of resolving the host, the least recently used evicted past a limit) and one per set
/// of pins, each checking every new connection after its TLS handshake. Over the transport's own
/// clients, each is one client per event loop, as the shared one is (`SharedClient.Made`).
extension AsyncHTTPClientTransport {
    /// What a client made on demand is for.
    struct ClientKey: Hashable {
        var host: String
        /// The address connections go to instead of resolving the host.
        var address: String?
        var pins: PublicKeyPins?
    }

    /// The clients made on demand, and which of them requests are running on: an evicted
    /// client is shut down only once its last request has ended, so eviction never cancels a
    /// load in flight.
    struct MadeClients {
        /// Each key's clients: one per event loop, or one for every loop over an app's client.
        var clients: [ClientKey: [HTTPClient]] = [:]
        /// The keys of the address clients, least recently used first.
        var order: [ClientKey] = []
        /// Requests running on each client.
        var inFlight: [ObjectIdentifier: Int] = [:]
        /// Evicted clients that still carry requests, shut down when the last one ends.
        var retiring: [ObjectIdentifier: HTTPClient] = [:]

        /// Every client made and not yet shut down.
        var all: [HTTPClient] { clients.values.flatMap(\.self) + Array(retiring.values) }

        /// One more request on `client`.
        mutating func take(_ client: HTTPClient) {
            inFlight[ObjectIdentifier(client), default: 0] += 1
        }

        /// One request fewer on `client`; the client when it was evicted and this was its last.
        mutating func give(_ client: HTTPClient) -> HTTPClient? {
            let id = ObjectIdentifier(client)
            let left = (inFlight[id] ?? 1) - 1
            inFlight[id] = left > 0 ? left : nil
            return left > 0 ? nil : retiring.removeValue(forKey: id)
        }

        /// Removes `key`'s clients; those no request runs on, to be shut down now.
        mutating func evict(_ key: ClientKey) -> [HTTPClient] {
            guard let evicted = clients.removeValue(forKey: key) else { return [] }
            return evicted.filter { client in
                let id = ObjectIdentifier(client)
                guard inFlight[id] == nil else {
                    retiring[id] = client
                    return false
                }
                return true
            }
        }
    }

    /// A request's use of a client, given back when the request ends.
    struct ClientLease {
        let client: HTTPClient
        /// Whether the client is one the transport made (and so counts its requests).
        let counted: Bool
    }

    /// The client of loop `index` for a request to `host` that connects to `address` (or
    /// resolves the host) and checks `pins`; the shared one when it does neither. A made client
    /// keeps the transport's settings; `dnsOverride` maps the host to the address, so the `Host`
    /// field, SNI and certificate validation stay on the host name. Give the lease back with
    /// ``release(_:)``.
    func lease(
        for host: String, connectingTo address: String?, pins: PublicKeyPins?, shared: SharedClient.Made, on index: Int
    ) throws -> ClientLease {
        guard address != nil || pins != nil else { return ClientLease(client: shared.client(on: index), counted: false) }
        // The host matters only to an address override; pins name their host themselves.
        let key = ClientKey(host: address == nil ? "" : host, address: address, pins: pins)
        let (leased, idle) = try madeClients.withLockedValue { made -> (HTTPClient, [HTTPClient]) in
            if address != nil {
                made.order.removeAll { $0 == key }
                made.order.append(key)
            }
            let clients: [HTTPClient]
            if let existing = made.clients[key] {
                clients = existing
            } else {
                guard !isShutDown.withLockedValue({ $0 }) else {
                    throw TransportFault.shutDown
                }
                clients = makeClients(for: host, connectingTo: address, pins: pins, like: shared)
                made.clients[key] = clients
            }
            let client = clients.count > index ? clients[index] : clients[0]
            made.take(client)
            var idle: [HTTPClient] = []
            let limit = max(connections.maximumAddressClients, 1)
            if address != nil, made.order.count > limit {
                let evicted = made.order.prefix(made.order.count - limit)
                made.order.removeFirst(evicted.count)
                idle = evicted.flatMap { made.evict($0) }
            }
            return (client, idle)
        }
        for client in idle { client.shutdown { _ in } }
        return ClientLease(client: leased, counted: true)
    }

    /// Ends a request's use of its client: an evicted client whose last request this was is
    /// shut down now.
    func release(_ lease: ClientLease) {
        guard lease.counted else { return }
        madeClients.withLockedValue { $0.give(lease.client) }?.shutdown { _ in }
    }

    /// The clients for `host`, `address` and `pins`: one per loop when `shared` is, otherwise one
    /// on its group.
    private func makeClients(
        for host: String, connectingTo address: String?, pins: PublicKeyPins?, like shared: SharedClient.Made
    ) -> [HTTPClient] {
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
        guard shared.perLoop else {
            return [HTTPClient(eventLoopGroupProvider: .shared(shared.group), configuration: clientConfiguration)]
        }
        return SharedClient.Made.clients(
            clientConfiguration, connections: connections.maximumConnectionsPerHost, over: shared.loops)
    }

    /// How many clients for chosen addresses the transport keeps now (evicted ones still
    /// finishing their requests not counted).
    var addressClientCount: Int { madeClients.withLockedValue { $0.clients.keys.filter { $0.address != nil }.count } }

    /// How many evicted clients wait for their last request to end.
    var retiringClientCount: Int { madeClients.withLockedValue { $0.retiring.count } }
}
