public import HTTPTypes

/// The flat form of a service from before its settings were grouped by concern; each forwards
/// to its new place, so code written for it compiles (with a warning that names the new place).
extension Service {
    /// Creates a service from the flat list of settings.
    @available(*, deprecated, message: "pass credentials: Service.Credentials(authentication:signer:cookies:) and connection: Service.Connection(pins:allowsInsecureHTTP:endpoints:), and set interceptors on the value")
    public init(
        id: ServiceID,
        environment: Environment = .release,
        baseURLs: [Environment: String],
        commonHeaders: HTTPFields = [:],
        commonParams: [String: JSON] = [:],
        signer: (any RequestSigner)? = nil,
        convention: any ResponseConvention = StatusOnlyConvention(),
        interceptors: [any Interceptor] = [],
        allowsInsecureHTTP: Bool = false,
        authentication: Authentication? = nil,
        endpoints: EndpointSelector? = nil,
        cookies: CookieJar? = nil,
        pins: [PublicKeyPins] = []
    ) {
        self.init(
            id: id, environment: environment, baseURLs: baseURLs, commonHeaders: commonHeaders, commonParams: commonParams,
            convention: convention,
            credentials: Credentials(authentication: authentication, signer: signer, cookies: cookies),
            connection: Connection(pins: pins, allowsInsecureHTTP: allowsInsecureHTTP, endpoints: endpoints))
        self.interceptors = interceptors
    }

    /// The service's signer.
    @available(*, deprecated, renamed: "credentials.signer")
    public var signer: (any RequestSigner)? {
        get { credentials.signer }
        set { credentials.signer = newValue }
    }

    /// The service's credential.
    @available(*, deprecated, renamed: "credentials.authentication")
    public var authentication: Authentication? {
        get { credentials.authentication }
        set { credentials.authentication = newValue }
    }

    /// The service's cookie jar.
    @available(*, deprecated, renamed: "credentials.cookies")
    public var cookies: CookieJar? {
        get { credentials.cookies }
        set { credentials.cookies = newValue }
    }

    /// The service's pins.
    @available(*, deprecated, renamed: "connection.pins")
    public var pins: [PublicKeyPins] {
        get { connection.pins }
        set { connection.pins = newValue }
    }

    /// Whether plain HTTP is allowed beyond loopback.
    @available(*, deprecated, renamed: "connection.allowsInsecureHTTP")
    public var allowsInsecureHTTP: Bool {
        get { connection.allowsInsecureHTTP }
        set { connection.allowsInsecureHTTP = newValue }
    }

    /// The service's endpoint selector.
    @available(*, deprecated, renamed: "connection.endpoints")
    public var endpoints: EndpointSelector? {
        get { connection.endpoints }
        set { connection.endpoints = newValue }
    }
}
