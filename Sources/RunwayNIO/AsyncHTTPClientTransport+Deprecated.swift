public import AsyncHTTPClient

extension AsyncHTTPClientTransport {
    /// The former name of ``Connections``.
    @available(*, deprecated, renamed: "Connections")
    public typealias Configuration = Connections

    /// Creates a transport with its own client.
    @available(*, deprecated, renamed: "init(connections:)")
    public convenience init(configuration: Connections) {
        self.init(connections: configuration)
    }

    /// Creates a transport over an app's client.
    @available(*, deprecated, renamed: "init(client:connections:)")
    public convenience init(client: HTTPClient, configuration: Connections) {
        self.init(client: client, connections: configuration)
    }
}
