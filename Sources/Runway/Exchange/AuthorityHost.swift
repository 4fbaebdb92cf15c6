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
}
