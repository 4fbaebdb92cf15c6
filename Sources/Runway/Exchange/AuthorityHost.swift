import Foundation

/// The host part of a request's authority, as pins, selectors and transports key on it.
package enum AuthorityHost {
    /// The lowercase host of `authority`, without port or IPv6 brackets.
    package static func of(_ authority: String) -> String {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") {
            return String(host[host.index(after: host.startIndex)..<end])
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return String(host)
    }

    /// The port of `authority`, or `scheme`'s default (443 for https, 80 for http); `nil` when
    /// neither says.
    package static func port(of authority: String, scheme: String?) -> Int? {
        let afterHost = authority.lastIndex(of: "]").map { authority[authority.index(after: $0)...] } ?? authority[...]
        if let colon = afterHost.lastIndex(of: ":"), let port = Int(afterHost[afterHost.index(after: colon)...]) {
            return port
        }
        switch scheme {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }
}
