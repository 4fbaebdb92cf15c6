extension Service {
    /// How connections to a service's hosts are made: whether plain HTTP is allowed, which
    /// public keys are trusted, which address is dialled.
    ///
    /// ``Engine/register(_:)`` checks the whole value against the service and its transport: it
    /// refuses pins its transport cannot check, a pinned host its base URLs reach over plain
    /// HTTP, and an endpoint selector for a host none of its base URLs name or on a transport
    /// that cannot connect to a chosen address — a connection is never silently weaker than the
    /// service says.
    public struct Connection: Sendable {
        /// Public-key pins of the service's hosts: every request to a pinned host, whichever API
        /// or redirect leads there, is checked on each new TLS connection.
        public var pins: [PublicKeyPins]
        /// Whether plain `http://` is allowed to hosts other than loopback (the App Transport
        /// Security exception). Off by default: such requests fail with
        /// ``RunwayError/insecureConnection(host:)`` before a socket opens.
        public var allowsInsecureHTTP: Bool
        /// Chooses the fastest address of the service's host instead of DNS; `nil` leaves every
        /// address to DNS. Only a transport that can connect to a chosen address
        /// (``Transport/supportsConnectAddress``) takes such a service.
        public var endpoints: EndpointSelector?

        /// Creates the connection settings of a service: HTTPS only, the system's trust, DNS.
        public init(pins: [PublicKeyPins] = [], allowsInsecureHTTP: Bool = false, endpoints: EndpointSelector? = nil) {
            self.pins = pins
            self.allowsInsecureHTTP = allowsInsecureHTTP
            self.endpoints = endpoints
        }
    }
}
