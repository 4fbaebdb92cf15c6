/// The name of a ``Service``: what an ``API`` declares to say which provider it calls.
///
/// Declare identifiers as static members so that APIs read well:
///
/// ```swift
/// extension ServiceID {
///     static let listings: ServiceID = "listings"
/// }
/// ```
public struct ServiceID: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier's text.
    public let rawValue: String

    /// Creates an identifier from its text.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
}
