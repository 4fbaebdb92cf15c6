/// Why a validator refused params or a response.
public struct ValidationFailure: Error, Sendable, Hashable {
    /// A sentence naming what is wrong, carried into ``RunwayError``.
    public var reason: String

    /// Creates a failure with its reason.
    public init(_ reason: String) { self.reason = reason }
}
