public import Hummingbird
public import NIOCore

/// The request context of Runway's server half: Hummingbird's basic one plus the address the
/// connection came from, which ``TrustedProxies`` needs to tell a load balancer from a client.
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer of the connection: the client, or the proxy in front of the server.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
