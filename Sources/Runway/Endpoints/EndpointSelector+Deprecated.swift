extension EndpointSelector {
    /// The former name of ``Probing``.
    @available(*, deprecated, renamed: "Probing")
    public typealias Configuration = Probing

    /// The former name of ``probing``.
    @available(*, deprecated, renamed: "probing")
    public var configuration: Probing { probing }

    /// Creates a selector.
    @available(*, deprecated, renamed: "init(host:port:candidates:scheme:probing:)")
    public convenience init(host: String, port: Int, candidates: [String], scheme: String = "https", configuration: Probing) {
        self.init(host: host, port: port, candidates: candidates, scheme: scheme, probing: configuration)
    }
}
