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
/// service's authentication empties the jar — a logout leaves no session behind. The jar lives
/// in memory only.
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

    private let cookies = Locked<[Cookie]>([])
    private let now: @Sendable () -> Date

    /// Creates an empty jar.
    public convenience init() {
        self.init(now: { Date() })
    }

    init(now: @escaping @Sendable () -> Date) {
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
        cookies.withLock { jar in
            for cookie in parsed {
                let declared = cookie.domain.lowercased()
                let hostOnly = declared.isEmpty || declared == host
                let domain = hostOnly ? host : String(declared.drop { $0 == "." })
                // A cookie for a domain the host is not within is refused (RFC 6265 §5.3 step 6).
                guard hostOnly || host == domain || host.hasSuffix("." + domain) else { continue }
                let path = cookie.path.hasPrefix("/") ? cookie.path : Self.defaultPath(of: url)
                let entry = Cookie(
                    name: cookie.name, value: cookie.value, domain: domain, hostOnly: hostOnly, path: path,
                    secure: cookie.isSecure, expires: cookie.expiresDate)
                jar.removeAll { $0.name == entry.name && $0.domain == entry.domain && $0.path == entry.path }
                if let expires = entry.expires, expires <= now { continue }
                jar.append(entry)
            }
        }
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
