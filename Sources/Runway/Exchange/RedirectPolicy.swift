/// Whether and how far the engine follows a 3xx answer, written as data so each API states its
/// own.
///
/// Transports never follow redirects; the engine does, inside the same deadline, and checks
/// every hop against the rules of the first request: no HTTPS → HTTP downgrade, plain HTTP only
/// to loopback (unless the service allows it), the hop host's own pins. A hop to the service's
/// own origin (scheme, host and port) is rebuilt from the API and signed again. A hop to another
/// origin is refused by default — it would carry the signature, the service's common header
/// fields (API keys) and session tokens to a host nobody chose — or, when the API opts in with
/// ``CrossOrigin/followWithoutCredentials``, sent bare: no signature, no common header fields,
/// no `Authorization` or `Cookie`.
///
/// For example:
///
/// ```swift
/// struct DownloadLinkAPI: API {
///     // …
///     var redirectPolicy: RedirectPolicy { .crossOriginWithoutCredentials }  // a CDN answers
/// }
/// ```
public struct RedirectPolicy: Sendable, Hashable {
    /// What a hop to another origin does.
    public enum CrossOrigin: Sendable, Hashable {
        /// The load fails with ``RunwayError/redirectRefused(location:reason:)``.
        case refuse
        /// The hop is sent without credentials: no signer, no cookies, and of all the header
        /// fields only those that describe the representation asked for — `Accept`,
        /// `Accept-Language`, `Accept-Encoding`, `User-Agent`, `Range`, `If-Range`, and
        /// `Content-Type` with a body the hop keeps. An allowlist, not a denylist: an API key in
        /// a field of any other name never reaches another origin.
        case followWithoutCredentials
    }

    /// How many hops one attempt follows at most; past it the load fails. 0 follows none: the
    /// 3xx lands as ``RunwayError/httpStatus(code:body:)``.
    public var maximumHops: Int
    /// What a hop to another origin does.
    public var crossOrigin: CrossOrigin

    /// Creates a policy.
    public init(maximumHops: Int = 5, crossOrigin: CrossOrigin = .refuse) {
        self.maximumHops = maximumHops
        self.crossOrigin = crossOrigin
    }

    /// Up to five hops within the service's origin; other origins refused.
    public static let `default` = RedirectPolicy()

    /// No hops: a 3xx is an answer like any other non-2xx status.
    public static let never = RedirectPolicy(maximumHops: 0)

    /// Up to five hops; those to other origins are sent without credentials.
    public static let crossOriginWithoutCredentials = RedirectPolicy(crossOrigin: .followWithoutCredentials)
}
