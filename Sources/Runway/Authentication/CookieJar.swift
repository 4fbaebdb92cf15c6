import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cookies one service keeps: an explicit choice, never a transport's side effect.
///
/// No transport keeps cookies (URLSession's jar is switched off), so a `Set-Cookie` answer is
/// forgotten unless the service has a jar. A service that signs in with a session cookie gives
/// itself one:
///
/// ```swift
/// let authentication = Authentication(MyAuthenticator())
/// try engine.register(
///     Service(id: .account, baseURLs: …, credentials: .init(authentication: authentication, cookies: CookieJar())))
/// ```
///
/// The engine stores the cookies of every answer from the service's own origin and sends the
/// matching ones back to that origin only (a redirect to another origin carries none, as with
/// every credential). A cookie is a credential: a service with a jar has its responses cached
/// only under a ``CachePolicy/sensitiveComponent``, and ``Authentication/reset()`` of the
/// service's authentication empties the jar — a logout leaves no session behind, and a cookie
/// that answers a request of the user before is never stored. The jar lives in memory only, and
/// is bounded (``Limits``): past its limits the oldest cookies go first.
///
/// What is stored follows RFC 6265bis §5.6: a `Secure` cookie (and a `__Secure-` or `__Host-`
/// one) only from an HTTPS answer; a `__Host-` cookie only host-only at path `/`; a `Domain` only
/// when the host is within it, never for an IP address other than the host itself, and never a
/// single label (`com`). Without a public-suffix list a `Domain` such as `co.uk` set by
/// `api.example.co.uk` is kept; it is sent back only to the service's own origin, the one host
/// the engine sends the jar's cookies to.
public final class CookieJar: Sendable {
    /// One stored cookie (RFC 6265 §5.3, without the public-suffix list: the engine stores only
    /// answers from the service's own origin).
    struct Cookie: Sendable, Equatable {
        var name: String
        var value: String
        /// Lowercase; a host-only cookie matches this host exactly.
        var domain: String
        var hostOnly: Bool
        var path: String
        var secure: Bool
        var expires: Date?
    }

    /// How much a jar keeps (RFC 6265 §6.1 asks for at least 50 cookies a domain and 4,096 bytes
    /// a cookie).
    public struct Limits: Sendable, Hashable {
        /// The most cookies kept; past it the oldest goes. Default 300.
        public var cookies: Int
        /// The most cookies kept for one domain; past it that domain's oldest goes. Default 50.
        public var cookiesPerDomain: Int
        /// The largest cookie kept, name and value in bytes; a larger one is ignored. Default 4,096.
        public var cookieBytes: Int

        public init(cookies: Int = 300, cookiesPerDomain: Int = 50, cookieBytes: Int = 4096) {
            self.cookies = cookies
            self.cookiesPerDomain = cookiesPerDomain
            self.cookieBytes = cookieBytes
        }
    }

    /// The limits in force.
    public let limits: Limits
    private let cookies = Locked<[Cookie]>([])
    private let now: @Sendable () -> Date

    /// Creates an empty jar that keeps at most what `limits` allow.
    public convenience init(limits: Limits = Limits()) {
        self.init(limits: limits, now: { Date() })
    }

    init(limits: Limits = Limits(), now: @escaping @Sendable () -> Date) {
        self.limits = limits
        self.now = now
    }

    /// Empties the jar.
    public func removeAll() {
        cookies.withLock { $0.removeAll() }
    }

    /// The names of the cookies kept now (expired ones left out).
    public var names: [String] {
        let now = now()
        return cookies.withLock { $0.filter { $0.expires.map { $0 > now } ?? true }.map(\.name) }
    }

    /// Stores the `Set-Cookie` fields of `response`, the answer to a request for `url`.
    func store(_ response: HTTPResponse, for url: URL) {
        let values = response.headerFields[values: .setCookie]
        guard !values.isEmpty, let host = url.host?.lowercased() else { return }
        // Foundation parses each field (attributes, dates, `Max-Age`); the rules of which cookie
        // goes where stay here.
        var parsed: [HTTPCookie] = []
        for value in values {
            parsed += HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": value], for: url)
        }
        let now = now()
        let overHTTPS = url.scheme?.lowercased() == "https"
        cookies.withLock { jar in
            for cookie in parsed {
                guard let entry = Self.entry(for: cookie, host: host, url: url, overHTTPS: overHTTPS, limits: limits) else {
                    continue
                }
                jar.removeAll { $0.name == entry.name && $0.domain == entry.domain && $0.path == entry.path }
                if let expires = entry.expires, expires <= now { continue }
                jar.append(entry)
                // The oldest go first: of the cookie's domain past its share, then of the jar.
                let ofDomain = jar.indices.filter { jar[$0].domain == entry.domain }
                if ofDomain.count > max(limits.cookiesPerDomain, 1), let oldest = ofDomain.first { jar.remove(at: oldest) }
                if jar.count > max(limits.cookies, 1) { jar.removeFirst(jar.count - max(limits.cookies, 1)) }
            }
        }
    }

    /// What `cookie`, set by an answer from `host`, is kept as — or `nil` when RFC 6265bis §5.6
    /// says to ignore it.
    static func entry(for cookie: HTTPCookie, host: String, url: URL, overHTTPS: Bool, limits: Limits) -> Cookie? {
        guard cookie.name.utf8.count + cookie.value.utf8.count <= limits.cookieBytes else { return nil }
        // Secure cookies, and the names that promise them, come only from secure origins.
        let name = cookie.name.lowercased()
        guard overHTTPS || !(cookie.isSecure || name.hasPrefix("__secure-") || name.hasPrefix("__host-")) else { return nil }
        if name.hasPrefix("__secure-") || name.hasPrefix("__host-") { guard cookie.isSecure else { return nil } }
        let declared = String(cookie.domain.lowercased().drop { $0 == "." })
        let hostOnly = declared.isEmpty || declared == host
        let domain = hostOnly ? host : declared
        if !hostOnly {
            // A domain the host is not within, a single label, or any domain for an IP address.
            guard host.hasSuffix("." + domain), domain.contains("."), !Self.isIPAddress(host) else { return nil }
        }
        let path = cookie.path.hasPrefix("/") ? cookie.path : Self.defaultPath(of: url)
        if name.hasPrefix("__host-") { guard hostOnly, path == "/" else { return nil } }
        return Cookie(
            name: cookie.name, value: cookie.value, domain: domain, hostOnly: hostOnly, path: path,
            secure: cookie.isSecure, expires: cookie.expiresDate)
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// The `Cookie` field for a request to `url`, or `nil` when no cookie matches.
    func field(for url: URL) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let isSecure = url.scheme?.lowercased() == "https"
        let now = now()
        let matching = cookies.withLock { jar -> [Cookie] in
            jar.removeAll { $0.expires.map { $0 <= now } ?? false }
            return jar.filter { cookie in
                let domainMatches = cookie.hostOnly ? host == cookie.domain : host == cookie.domain || host.hasSuffix("." + cookie.domain)
                return domainMatches && Self.path(path, matches: cookie.path) && (!cookie.secure || isSecure)
            }
        }
        guard !matching.isEmpty else { return nil }
        // Longer paths first (RFC 6265 §5.4).
        return matching.sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 §5.1.4 path-match.
    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath[requestPath.index(requestPath.startIndex, offsetBy: cookiePath.count)] == "/"
    }

    /// RFC 6265 §5.1.4 default-path: the request path up to its last `/`.
    static func defaultPath(of url: URL) -> String {
        let path = url.path
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
