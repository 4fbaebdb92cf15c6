/// Routes incoming URLs of the declared schemes to handlers, after strict validation.
///
/// Validation comes first (see ``IncomingURL``); no handler ever sees a URL that failed it. Routes
/// are tried by priority (highest first), then in the order they were added; a handler may answer
/// ``RouteResult/notHandled`` to let the next route try. The fallback sees valid URLs that no
/// route handled.
///
/// For example:
///
/// ```swift
/// var router = URLRouter(declarations: [URLSchemeDeclaration(name: "com.acme.shop", schemes: ["shop"])])
/// router.add("item", RoutePattern(host: "items", path: [.parameter("id", .integer(1...Int.max))])) { match in
///     show(item: match["id"]?.integer)
///     return .handled
/// }
/// router.route("shop://items/42")  // .handled(route: "item")
/// ```
public struct URLRouter: Sendable {
    private struct Route: Sendable {
        var name: String
        var pattern: RoutePattern
        var priority: Int
        var order: Int
        var handler: @Sendable (RouteMatch) -> RouteResult
    }

    public let declarations: [URLSchemeDeclaration]
    public let limits: LinkLimits
    private var routes: [Route] = []
    private var fallback: (@Sendable (IncomingURL) -> RouteResult)?

    public init(declarations: [URLSchemeDeclaration], limits: LinkLimits = LinkLimits()) {
        self.declarations = declarations
        self.limits = limits
    }

    /// Adds a route.
    public mutating func add(
        _ name: String, _ pattern: RoutePattern, priority: Int = 0, handler: @escaping @Sendable (RouteMatch) -> RouteResult
    ) {
        routes.append(Route(name: name, pattern: pattern, priority: priority, order: routes.count, handler: handler))
        routes.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.order < $1.order }
    }

    /// Sets what valid URLs that no route handled are given to.
    public mutating func setFallback(_ handler: @escaping @Sendable (IncomingURL) -> RouteResult) {
        fallback = handler
    }

    /// Validates `text` and hands it to the first route that matches and handles it.
    public func route(_ text: String) -> RoutingOutcome {
        let url: IncomingURL
        do {
            url = try IncomingURL(text, limits: limits)
        } catch {
            return .rejected(error)
        }
        guard declarations.contains(where: { $0.schemes.contains(url.scheme) }) else {
            return .rejected(.undeclaredScheme(url.scheme))
        }
        for route in routes {
            guard let values = route.pattern.match(url) else { continue }
            if route.handler(RouteMatch(route: route.name, url: url, values: values)) == .handled {
                return .handled(route: route.name)
            }
        }
        if let fallback, fallback(url) == .handled { return .handledByFallback }
        return .notHandled
    }
}

/// What a handler answers.
public enum RouteResult: Sendable, Hashable {
    case handled
    case notHandled
}

/// What became of an incoming URL.
public enum RoutingOutcome: Sendable, Hashable {
    /// The named route handled it.
    case handled(route: String)
    /// The fallback handled it.
    case handledByFallback
    /// It was valid, but nothing handled it.
    case notHandled
    /// It failed validation; no handler saw it.
    case rejected(LinkError)
}

/// A matched route: its name, the URL, and the typed values captured.
public struct RouteMatch: Sendable {
    public let route: String
    public let url: IncomingURL
    public let values: [String: ParameterValue]

    public subscript(name: String) -> ParameterValue? { values[name] }
}
