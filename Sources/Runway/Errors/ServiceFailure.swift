/// One of a service's common errors, as its ``ServiceErrorHandler`` names it: what
/// ``RunwayError/service(_:)`` carries.
///
/// ```swift
/// catch .service(let failure) where failure.kind == .sessionEnded { showLogin() }
/// ```
public struct ServiceFailure: Error, Sendable, Hashable {
    /// Which common error: one of the named kinds, or an app's own.
    public struct Kind: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The user's session ended: sign in again.
        public static let sessionEnded: Kind = "session_ended"
        /// This version of the app is no longer served: update it.
        public static let upgradeRequired: Kind = "upgrade_required"
        /// The service is down for maintenance: try later.
        public static let maintenance: Kind = "maintenance"
    }

    /// Which common error.
    public var kind: Kind
    /// A sentence for people (``RunwayError/localizedMessage(language:)`` shows it as it is).
    public var message: String
    /// The error the handler was given, when it ended the load because of one; kept for logs.
    public var cause: String?

    /// Creates a failure of `kind`.
    public init(_ kind: Kind, message: String, cause: RunwayError? = nil) {
        self.kind = kind
        self.message = message
        self.cause = cause.map { String(describing: $0) }
    }
}
