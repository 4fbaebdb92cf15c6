/// Builds a well-formed URL for another app's scheme, percent-encoding each component by its own
/// rules (RFC 3986): path segments keep `:@!$'()*,;=`; query keys and values also encode `&`, `=`
/// and `+`; a whole-text query and the fragment keep `/?`. Everything else outside the
/// unreserved set is encoded, non-ASCII as UTF-8.
///
/// For example:
///
/// ```swift
/// let url = try OutgoingURL(scheme: "todolist", host: "www.acme.com", queryText: "Quarterly Report",
///                           fragment: "200806231300").string()
/// // todolist://www.acme.com?Quarterly%20Report#200806231300
/// ```
public struct OutgoingURL: Sendable, Hashable {
    public var scheme: String
    public var host: String
    public var port: Int?
    public var path: [String]
    /// Named items, in this order.
    public var queryItems: [QueryItem]
    /// The whole query as one text (used instead of ``queryItems`` when set).
    public var queryText: String?
    public var fragment: String?

    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(
        scheme: String, host: String = "", port: Int? = nil, path: [String] = [], queryItems: [QueryItem] = [],
        queryText: String? = nil, fragment: String? = nil
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.queryItems = queryItems
        self.queryText = queryText
        self.fragment = fragment
    }

    static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    static let segmentKeeps = unreserved.union(":@!$'()*,;=".utf8)
    static let itemKeeps = unreserved.union(":@!$'()*,;/?".utf8)
    static let textKeeps = unreserved.union(":@!$'()*,;/?".utf8)
    static let fragmentKeeps = unreserved.union(":@!$'()*,;=/?".utf8)

    /// The URL text.
    ///
    /// - throws: ``LinkError/malformed(reason:)`` for an invalid scheme, host or port.
    public func string() throws(LinkError) -> String {
        guard let first = scheme.unicodeScalars.first, first.isASCIILetter,
            scheme.unicodeScalars.allSatisfy({ $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { throw .malformed(reason: "invalid scheme \"\(scheme)\"") }
        let hostAllowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.".utf8)
        guard host.utf8.allSatisfy(hostAllowed.contains) else { throw .malformed(reason: "invalid host \"\(host)\"") }
        if let port, !(0...65_535).contains(port) { throw .malformed(reason: "invalid port \(port)") }
        if path.contains(where: \.isEmpty) { throw .malformed(reason: "empty path segment") }
        var text = scheme.lowercased() + "://" + host.lowercased()
        if let port { text += ":\(port)" }
        for segment in path { text += "/" + Self.encode(segment, keeping: Self.segmentKeeps) }
        if let queryText {
            text += "?" + Self.encode(queryText, keeping: Self.textKeeps)
        } else if !queryItems.isEmpty {
            text += "?" + queryItems.map {
                Self.encode($0.name, keeping: Self.itemKeeps) + "=" + Self.encode($0.value, keeping: Self.itemKeeps)
            }.joined(separator: "&")
        }
        if let fragment { text += "#" + Self.encode(fragment, keeping: Self.fragmentKeeps) }
        return text
    }

    static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            if allowed.contains(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
