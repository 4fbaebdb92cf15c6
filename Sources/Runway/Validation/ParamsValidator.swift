/// Checks a call's params before any network activity.
///
/// Invalid params never leave the device: the load fails with
/// ``RunwayError/paramsInvalid(reason:)`` carrying the validator's reason (a registration form,
/// for example, refuses a phone number of the wrong length before calling the server).
public protocol ParamsValidator: Sendable {
    /// Checks `params`.
    ///
    /// - throws: ``ValidationFailure`` with the reason the params are refused.
    func validate(_ params: Parameters) throws(ValidationFailure)
}

/// Accepts every params; the default of an ``API``.
public struct AcceptAllParams: ParamsValidator {
    public init() {}
    public func validate(_ params: Parameters) throws(ValidationFailure) {}
}

/// A params validator written as a closure.
public struct ParamsValidation: ParamsValidator {
    private let body: @Sendable (Parameters) throws(ValidationFailure) -> Void

    /// Creates a validator that runs `body`.
    public init(_ body: @escaping @Sendable (Parameters) throws(ValidationFailure) -> Void) {
        self.body = body
    }

    public func validate(_ params: Parameters) throws(ValidationFailure) { try body(params) }
}

/// Requires each named param to be present, not `null` and not an empty string.
public struct RequiredParams: ParamsValidator {
    /// The names that must be present.
    public var names: [String]

    /// Creates a validator requiring `names`.
    public init(_ names: [String]) { self.names = names }

    public func validate(_ params: Parameters) throws(ValidationFailure) {
        for name in names {
            switch params[name] {
            case nil, .null?: throw ValidationFailure("\"\(name)\" is required")
            case .string(let text)? where text.isEmpty: throw ValidationFailure("\"\(name)\" must not be empty")
            default: continue
            }
        }
    }
}

extension ParamsValidator where Self == RequiredParams {
    /// Requires each of `names`; see ``RequiredParams``.
    public static func required(_ names: String...) -> RequiredParams { RequiredParams(names) }
}

extension ParamsValidator where Self == ParamsValidation {
    /// A validator written as a closure.
    public static func checking(
        _ body: @escaping @Sendable (Parameters) throws(ValidationFailure) -> Void
    ) -> ParamsValidation {
        ParamsValidation(body)
    }
}
