import Foundation
import HTTPTypes

/// The engine's decision about one answer of an exchange: land it, follow it to the next hop,
/// or refuse the hop. A plain value computed without I/O, so every rule is unit-tested on its
/// own (the shape of AsyncHTTPClient's `RedirectState`).
enum RedirectStep: Equatable {
    /// Not a redirect to follow: the answer lands.
    case land
    /// Send the next hop.
    case follow(Hop)
    /// The hop breaks a rule; the load fails with this error.
    case refuse(RunwayError)

    /// Where the next hop goes and what it carries.
    struct Hop: Equatable {
        var scheme: String
        var authority: String
        /// Path and query, percent-encoded as the `Location` gave them.
        var path: String
        var method: HTTPRequest.Method
        /// Whether the body is sent again (307 and 308 keep method and body).
        var keepsBody: Bool
        /// Whether the hop stays within the service's origin (scheme, host, port).
        var isSameOrigin: Bool
    }

    /// The origin requests of a service start from: scheme, lowercase host, effective port.
    struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: Int

        init?(scheme: String?, authority: String?) {
            guard let scheme = scheme?.lowercased(), let authority,
                let url = URL(string: "\(scheme)://\(authority)"), let host = url.host?.lowercased()
            else { return nil }
            self.scheme = scheme
            self.host = host.trimmingCharacters(in: ["[", "]"])
            self.port = url.port ?? (scheme == "https" ? 443 : 80)
        }
    }

    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Decides what follows an answer with `status` and `location` to `request`.
    ///
    /// - parameters:
    ///   - hopsSoFar: Hops already followed in this attempt.
    ///   - origin: The service's origin, worked out only for an answer that redirects.
    ///   - allowsInsecureHTTP: The service's exception to the plain-HTTP rule.
    static func decide(
        status: Int, location: String?, request: HTTPRequest, hopsSoFar: Int, policy: RedirectPolicy,
        origin originOfService: @autoclosure () -> Origin?, allowsInsecureHTTP: Bool
    ) -> RedirectStep {
        guard redirectStatuses.contains(status), policy.maximumHops > 0, let location, !location.isEmpty else {
            return .land
        }
        guard hopsSoFar < policy.maximumHops else {
            return .refuse(.redirectRefused(location: location, reason: "more than \(policy.maximumHops) redirects"))
        }
        guard let base = request.url, let target = URL(string: location, relativeTo: base)?.absoluteURL,
            let components = URLComponents(url: target, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.percentEncodedHost, !host.isEmpty
        else {
            return .refuse(.redirectRefused(location: location, reason: "not an http or https URL"))
        }
        guard components.user == nil, components.password == nil else {
            return .refuse(.redirectRefused(location: location, reason: "the URL carries user information"))
        }
        let bareHost = host.lowercased().trimmingCharacters(in: ["[", "]"])
        if scheme == "http", request.scheme?.lowercased() == "https" {
            return .refuse(.insecureConnection(host: bareHost))
        }
        if scheme == "http", !allowsInsecureHTTP, !TransportSecurity.isLoopback(host: bareHost) {
            return .refuse(.insecureConnection(host: bareHost))
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let authority = components.port.map { "\(hostPart):\($0)" } ?? hostPart
        let origin = originOfService()
        let sameOrigin = origin != nil && Origin(scheme: scheme, authority: authority) == origin
        if !sameOrigin, policy.crossOrigin == .refuse {
            return .refuse(.redirectRefused(location: target.absoluteString, reason: "another origin (\(bareHost))"))
        }
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        if let query = components.percentEncodedQuery { path += "?" + query }

        // RFC 9110 §15.4: 303 turns anything but HEAD into GET; user agents turn a POST into a GET
        // on 301 and 302 as well. 307 and 308 keep method and body.
        var method = request.method
        if status == 303, method != .head { method = .get }
        if status == 301 || status == 302, method == .post { method = .get }
        return .follow(
            Hop(
                scheme: scheme, authority: authority, path: path, method: method, keepsBody: method == request.method,
                isSameOrigin: sameOrigin))
    }
}

extension RedirectStep.Hop {
    /// The next hop within the service's origin: the request as built (common header fields
    /// included), at the new path, with the method and body the status allows; signed again.
    func sameOrigin(from previous: PreparedRequest) -> PreparedRequest {
        var next = previous
        next.head.method = method
        next.head.scheme = scheme
        next.head.authority = authority
        next.head.path = path
        if !keepsBody {
            next.body = nil
            next.head.headerFields[.contentType] = nil
        }
        return next
    }

    /// The next hop to another origin: only the header fields that describe the representation
    /// asked for (``crossOriginFields``), from the API or the request as built — no signature,
    /// no common header fields, no credential under any name.
    func crossOrigin(from previous: PreparedRequest, api: some API) -> PreparedRequest {
        var fields = HTTPFields()
        for name in Self.crossOriginFields {
            if let value = api.headers[name] ?? previous.head.headerFields[name] { fields[name] = value }
        }
        if keepsBody, let contentType = previous.head.headerFields[.contentType] {
            fields[.contentType] = contentType
        }
        let head = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: fields)
        return PreparedRequest(head: head, body: keepsBody ? previous.body : nil)
    }

    /// What a hop to another origin may carry: what is asked for, never who asks. An allowlist,
    /// so that a credential in a field of any name (an `X-Api-Key`) stays with its origin.
    static let crossOriginFields: [HTTPField.Name] = [.accept, .acceptLanguage, .acceptEncoding, .userAgent, .range, .ifRange]
}
