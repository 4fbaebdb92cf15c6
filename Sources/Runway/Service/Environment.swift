/// Which deployment of a service an app talks to.
///
/// Each ``Service`` has a base URL per environment; switching environment (for a test build,
/// a release candidate) changes every API of that service at once. Runway names three; an app
/// declares any others it has as static members:
///
/// ```swift
/// extension Environment {
///     static let staging: Environment = "staging"
/// }
/// ```
public struct Environment: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The environment's name; part of cache keys, so keep it stable.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates an environment named `name`.
    public init(_ name: String) { self.rawValue = name }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// The development servers.
    public static let develop: Environment = "develop"
    /// The release-candidate (pre-production) servers.
    public static let releaseCandidate: Environment = "releaseCandidate"
    /// The production servers.
    public static let release: Environment = "release"
}
