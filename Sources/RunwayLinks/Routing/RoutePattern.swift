/// What a route accepts, part by part, every part anchored at both ends.
///
/// The host must equal the pattern's host; the path must have exactly the pattern's segments;
/// the query and the fragment must be what the pattern declares and nothing more. (An unanchored
/// start — a pattern matching anywhere inside a path — is how deep-link routers let
/// `evil/…/legit` through.)
public struct RoutePattern: Sendable {
    /// One path segment.
    public enum Segment: Sendable {
        case literal(String)
        case parameter(String, ParameterConverter)
    }

    /// What the query must be.
    public enum Query: Sendable {
        /// No query at all.
        case none
        /// The whole decoded query is one value (`todolist://host?Buy%20milk`).
        case text(String, ParameterConverter, optional: Bool)
        /// Named items; `required` ones must be present; no other keys are accepted.
        case items([String: ParameterConverter], required: Set<String>)
    }

    /// What the fragment must be.
    public enum Fragment: Sendable {
        case none
        case parameter(String, ParameterConverter, optional: Bool)
    }

    /// The scheme, or `nil` for any declared scheme.
    public var scheme: String?
    /// The host, lowercase; `""` for none.
    public var host: String
    /// The port the URL must name, or `nil` for a URL that names none (a URL with a port the
    /// pattern does not declare is refused, like any other undeclared part).
    public var port: Int?
    public var path: [Segment]
    public var query: Query
    public var fragment: Fragment

    public init(
        scheme: String? = nil, host: String, port: Int? = nil, path: [Segment] = [], query: Query = .none,
        fragment: Fragment = .none
    ) {
        self.scheme = scheme?.lowercased()
        self.host = host.lowercased()
        self.port = port
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// The captured values when `url` matches, else `nil`.
    func match(_ url: IncomingURL) -> [String: ParameterValue]? {
        if let scheme, scheme != url.scheme { return nil }
        guard url.host == host, url.port == port, url.pathSegments.count == path.count else { return nil }
        var values: [String: ParameterValue] = [:]
        for (segment, text) in zip(path, url.pathSegments) {
            switch segment {
            case .literal(let literal): guard literal == text else { return nil }
            case .parameter(let name, let converter):
                guard let value = converter.convert(text) else { return nil }
                values[name] = value
            }
        }
        switch query {
        case .none:
            guard url.queryText == nil || url.queryText == "" else { return nil }
        case .text(let name, let converter, let optional):
            guard Self.capture(url.queryText, as: name, converter, optional: optional, into: &values) else { return nil }
        case .items(let converters, let required):
            guard required.isSubset(of: url.queryItems.keys), Set(url.queryItems.keys).isSubset(of: converters.keys) else {
                return nil
            }
            for (key, text) in url.queryItems {
                guard let value = converters[key]?.convert(text) else { return nil }
                values[key] = value
            }
        }
        switch fragment {
        case .none:
            guard url.fragment == nil || url.fragment == "" else { return nil }
        case .parameter(let name, let converter, let optional):
            guard Self.capture(url.fragment, as: name, converter, optional: optional, into: &values) else { return nil }
        }
        return values
    }

    /// Converts a part that may be absent: an empty or missing part passes only when optional.
    private static func capture(
        _ text: String?, as name: String, _ converter: ParameterConverter, optional: Bool,
        into values: inout [String: ParameterValue]
    ) -> Bool {
        guard let text, !text.isEmpty else { return optional }
        guard let value = converter.convert(text) else { return false }
        values[name] = value
        return true
    }
}
