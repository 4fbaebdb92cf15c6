import Foundation
public import HTTPTypes

/// One API provider: its base URLs per environment, what every call to it carries, and how it
/// reports business errors.
///
/// An app registers each service it talks to with its ``Engine``; each ``API`` names its
/// service by ``ServiceID``. Several services can be registered at once, each in its own
/// environment.
///
/// For example:
///
/// ```swift
/// let listings = Service(
///     id: .listings,
///     environment: .release,
///     baseURLs: [.develop: "http://127.0.0.1:8080", .release: "https://api.example.com/v2"],
///     commonParams: ["app_version": "5.1"],
///     convention: .codeEnvelope()
/// )
/// try Engine.shared.register(listings)
/// ```
public struct Service: Sendable {
    /// The identifier APIs use to name this service.
    public var id: ServiceID
    /// The environment whose base URL is in use.
    public var environment: Environment
    /// The base URL of each environment: scheme, host, optional port and path prefix.
    public var baseURLs: [Environment: String]
    /// Header fields every request to this service carries (an API's own fields win).
    public var commonHeaders: HTTPFields
    /// Params every request to this service carries (a load's own params win).
    public var commonParams: [String: JSON]
    /// Signs every request to this service; `nil` sends unsigned requests.
    public var signer: (any RequestSigner)?
    /// How this service reports success and business errors in a 2xx body.
    public var convention: any ResponseConvention
    /// Interceptors that run for every API of this service, before the API's own.
    public var interceptors: [any Interceptor]
    /// The credential every request to this service carries (unless its API opts out with
    /// ``API/authenticates``), refreshed once when the server says it expired; `nil` sends none.
    public var authentication: Authentication?
    /// Whether plain `http://` is allowed to hosts other than loopback (the App Transport Security
    /// exception). Off by default: such requests fail with ``RunwayError/insecureConnection(host:)``
    /// before a socket opens.
    public var allowsInsecureHTTP: Bool
    /// Chooses the fastest address of the service's host instead of DNS; `nil` leaves every
    /// address to DNS. Only a transport that can connect to a chosen address
    /// (``Transport/supportsConnectAddress``) takes such a service.
    public var endpoints: EndpointSelector?
    /// The cookies the service keeps; `nil` (the default) keeps none. ``Authentication/reset()``
    /// of the service's ``authentication`` empties it.
    public var cookies: CookieJar?
    /// Public-key pins of the service's hosts: every request to a pinned host, whichever API or
    /// redirect leads there, is checked on each new TLS connection. ``Engine/register(_:)``
    /// refuses the service when its transport cannot check a pin's scope.
    public var pins: [PublicKeyPins]
    /// Change every request of this service before it leaves — every attempt and every
    /// same-origin redirect hop, before the credential and the signer — then the API's own
    /// (``API/adapters``). Default: none. See ``RequestAdapter``.
    public var adapters: [any RequestAdapter] = []
    /// Decides, once for every API of this service, what a load does after each failed
    /// attempt: end it with a typed error, send it again once, or let the error through.
    /// Default: `nil`, every error delivered as it is. See ``ServiceErrorHandler``.
    public var errorHandler: (any ServiceErrorHandler)?

    /// Creates a service.
    ///
    /// - parameters:
    ///   - id: The identifier APIs name.
    ///   - environment: The environment to use; defaults to ``Environment/release``.
    ///   - baseURLs: A base URL per environment.
    ///   - commonHeaders: Header fields sent with every request.
    ///   - commonParams: Params sent with every request.
    ///   - signer: The request signer, if the service checks signatures.
    ///   - convention: How 2xx bodies report business errors; defaults to status only.
    ///   - interceptors: Interceptors for every API of the service.
    ///   - allowsInsecureHTTP: Allow plain HTTP to hosts other than loopback.
    ///   - authentication: The credential requests carry, and how it is refreshed.
    ///   - endpoints: Chooses the host's fastest address; the engine starts its probing when the
    ///     service is registered.
    ///   - cookies: Keeps the cookies the service sets; `nil` forgets them.
    ///   - pins: Public-key pins of the service's hosts; none by default.
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
        self.id = id
        self.environment = environment
        self.baseURLs = baseURLs
        self.commonHeaders = commonHeaders
        self.commonParams = commonParams
        self.signer = signer
        self.convention = convention
        self.interceptors = interceptors
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.authentication = authentication
        self.endpoints = endpoints
        self.cookies = cookies
        self.pins = pins
    }

    /// The base URL of the current environment.
    public var baseURL: String? { baseURLs[environment] }
}
