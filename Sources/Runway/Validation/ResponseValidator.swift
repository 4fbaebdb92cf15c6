/// Checks a landed response after the service's convention accepted it.
///
/// It runs off the main actor. A refusal fails the load with
/// ``RunwayError/invalidResponse(reason:)``; the raw response is not kept.
public protocol ResponseValidator: Sendable {
    /// Checks `response`.
    ///
    /// - throws: ``ValidationFailure`` with the reason the response is refused.
    func validate(_ response: RawResponse) throws(ValidationFailure)
}

/// Accepts every response; the default of an ``API``.
public struct AcceptAllResponses: ResponseValidator {
    public init() {}
    public func validate(_ response: RawResponse) throws(ValidationFailure) {}
}

/// A response validator written as a closure.
public struct ResponseValidation: ResponseValidator {
    private let body: @Sendable (RawResponse) throws(ValidationFailure) -> Void

    /// Creates a validator that runs `body`.
    public init(_ body: @escaping @Sendable (RawResponse) throws(ValidationFailure) -> Void) {
        self.body = body
    }

    public func validate(_ response: RawResponse) throws(ValidationFailure) { try body(response) }
}

extension ResponseValidator where Self == ResponseValidation {
    /// A validator written as a closure.
    public static func checking(
        _ body: @escaping @Sendable (RawResponse) throws(ValidationFailure) -> Void
    ) -> ResponseValidation {
        ResponseValidation(body)
    }
}
