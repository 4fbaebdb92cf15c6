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
    /// How this service reports success and business errors in a 2xx body.
    public var convention: any ResponseConvention
    /// Who the requests are from: the credential, the signature, the cookies.
    public var credentials: Credentials
    /// How connections to the service's hosts are made: plain HTTP or not, which keys are
    /// trusted, which address is dialled.
    public var connection: Connection
    /// Interceptors that run for every API of this service, before the API's own.
    public var interceptors: [any Interceptor] = []
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
    /// What a service is — where it lives, what every call carries, how it answers —
    /// is given here; the rest is grouped by concern (``credentials``, ``connection``) and the
    /// hooks (``interceptors``, ``adapters``, ``errorHandler``) are set on the value.
    ///
    /// - parameters:
    ///   - id: The identifier APIs name.
    ///   - environment: The environment to use; defaults to ``Environment/release``.
    ///   - baseURLs: A base URL per environment.
    ///   - commonHeaders: Header fields sent with every request.
    ///   - commonParams: Params sent with every request.
    ///   - convention: How 2xx bodies report business errors; defaults to status only.
    ///   - credentials: The credential, signer and cookies of the service's requests; none by
    ///     default.
    ///   - connection: Plain HTTP, pins and the endpoint selector; HTTPS, DNS and the system's
    ///     trust by default.
    public init(
        id: ServiceID,
        environment: Environment = .release,
        baseURLs: [Environment: String],
        commonHeaders: HTTPFields = [:],
        commonParams: [String: JSON] = [:],
        convention: any ResponseConvention = StatusOnlyConvention(),
        credentials: Credentials = Credentials(),
        connection: Connection = Connection()
    ) {
        self.id = id
        self.environment = environment
        self.baseURLs = baseURLs
        self.commonHeaders = commonHeaders
        self.commonParams = commonParams
        self.convention = convention
        self.credentials = credentials
        self.connection = connection
    }

    /// The base URL of the current environment.
    public var baseURL: String? { baseURLs[environment] }
}
