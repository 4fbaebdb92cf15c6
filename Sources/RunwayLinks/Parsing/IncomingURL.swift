/// An incoming URL, parsed strictly and decoded once: what routes match against.
///
/// Only `scheme://authority[/path][?query][#fragment]` is accepted. The text must be printable
/// ASCII (anything else must arrive percent-encoded), at most ``LinkLimits/maximumLength``
/// bytes. The scheme and host are lowercased (RFC 3986: both are case-insensitive); user info is
/// refused; a path may end in one slash but may not hold empty segments. Each path segment, query key and value, the whole query and the fragment are
/// percent-decoded exactly once and must be UTF-8 without control characters.
public struct IncomingURL: Sendable, Hashable {
    /// The scheme, lowercased.
    public let scheme: String
    /// The host, lowercased; may be empty (`todolist:///path`).
    public let host: String
    /// The port, if given.
    public let port: Int?
    /// The decoded path segments (`/a/b%20c` → `["a", "b c"]`).
    public let pathSegments: [String]
    /// The whole query, decoded, when there is one (`?Quarterly%20Report` → `Quarterly Report`).
    public let queryText: String?
    /// The decoded query items, by the duplicate-key rule.
    public let queryItems: [String: String]
    /// The decoded fragment, when there is one.
    public let fragment: String?

    /// Parses `text`.
    ///
    /// - throws: ``LinkError`` naming what is wrong; nothing is partially accepted.
    public init(_ text: String, limits: LinkLimits = LinkLimits()) throws(LinkError) {
        let bytes = text.utf8
        guard bytes.count <= limits.maximumLength else {
            throw .tooLong(length: bytes.count, limit: limits.maximumLength)
        }
        for (offset, byte) in bytes.enumerated() where byte < 0x21 || byte > 0x7E {
            throw .invalidCharacter(offset: offset)
        }
        guard let colon = text.firstIndex(of: ":") else { throw .malformed(reason: "no scheme") }
        let scheme = text[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCIILetter,
            scheme.unicodeScalars.allSatisfy({ $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { throw .malformed(reason: "invalid scheme") }
        self.scheme = scheme.lowercased()

        var rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { throw .malformed(reason: "no authority (expected \"//\" after the scheme)") }
        rest = rest.dropFirst(2)

        // The fragment ends everything; a second "#" cannot appear in it.
        var fragmentText: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragmentText = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
            if fragmentText?.contains("#") == true { throw .malformed(reason: "\"#\" inside the fragment") }
        }
        var queryRaw: Substring?
        if let mark = rest.firstIndex(of: "?") {
            queryRaw = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let pathRaw = rest[authorityEnd...]

        guard !authority.contains("@") else { throw .malformed(reason: "user info is not accepted") }
        var hostPart = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .malformed(reason: "unclosed IP literal") }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .malformed(reason: "invalid host") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let value = Int(portText),
                value <= 65_535
            else { throw .malformed(reason: "invalid port") }
            port = value
        }
        let hostAllowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=[]:".utf8)
        guard hostPart.utf8.allSatisfy(hostAllowed.contains) else { throw .malformed(reason: "invalid host") }
        self.host = hostPart.lowercased()
        self.port = port

        // One trailing slash is ignored (`/a/` is `/a`); an empty segment anywhere else (`/a//b`)
        // is refused, so that every accepted path has exactly one spelling.
        var segments: [String] = []
        var pathBody = pathRaw.dropFirst()
        if pathBody.hasSuffix("/") { pathBody = pathBody.dropLast() }
        if !pathBody.isEmpty {
            for part in pathBody.split(separator: "/", omittingEmptySubsequences: false) {
                guard !part.isEmpty else { throw .malformed(reason: "empty path segment") }
                segments.append(try PercentDecoding.decode(part, component: "path"))
            }
        }
        self.pathSegments = segments

        if let queryRaw {
            self.queryText = try PercentDecoding.decode(queryRaw, component: "query")
            var items: [String: String] = [:]
            for pair in queryRaw.split(separator: "&", omittingEmptySubsequences: true) {
                let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = try PercentDecoding.decode(pieces[0], component: "query key")
                let value = pieces.count > 1 ? try PercentDecoding.decode(pieces[1], component: "query value") : ""
                if items[key] != nil {
                    switch limits.duplicateKeys {
                    case .reject: throw .duplicateQueryKey(key)
                    case .first: continue
                    case .last: break
                    }
                }
                items[key] = value
            }
            self.queryItems = items
        } else {
            self.queryText = nil
            self.queryItems = [:]
        }
        self.fragment = try fragmentText.map { fragment throws(LinkError) in
            try PercentDecoding.decode(fragment, component: "fragment")
        }
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
