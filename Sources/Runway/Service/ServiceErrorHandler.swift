/// A service's common errors handled in one place (what such layers call `handleCommonError`): a business
/// code that means "session ended", "upgrade required" or "maintenance" is decided once for
/// every API of the service instead of in every delegate.
///
/// Set it on the service (``Service/errorHandler``). The engine asks it, off the main actor,
/// about each failed attempt of every API of the service — through every entry point, before
/// the API's retry policy — except a cancellation. It may end the load with a typed error, send
/// it again once, or let the error through as it is:
///
/// ```swift
/// struct AccountErrors: ServiceErrorHandler {
///     let session: Session
///     func handle(_ error: RunwayError, context: ServiceErrorContext) async -> ServiceErrorDecision {
///         switch error {
///         case .business(code: 4010, _):
///             // The token was revoked elsewhere: renew it once, then send the load again.
///             return await session.renew() ? .retryOnce : .fail(.service(.init(.sessionEnded, message: "Please sign in again.")))
///         case .business(code: 4260, let message):
///             return .fail(.service(.init(.upgradeRequired, message: message, cause: error)))
///         case .httpStatus(code: 503, _) where context.attempt > 2:
///             return .fail(.service(.init(.maintenance, message: "Back soon.", cause: error)))
///         default:
///             return .deliver
///         }
///     }
/// }
/// ```
public protocol ServiceErrorHandler: Sendable {
    /// Decides what the load does after `error`.
    func handle(_ error: RunwayError, context: ServiceErrorContext) async -> ServiceErrorDecision
}

/// What a ``ServiceErrorHandler`` decides.
public enum ServiceErrorDecision: Sendable, Hashable {
    /// Let the error through as it is; the API's retry policy still applies.
    case deliver
    /// End the load with this error, without retrying.
    case fail(RunwayError)
    /// Send the load again at once (built, adapted and signed afresh), once per load; asked
    /// again after that attempt, the same decision lets the error through.
    case retryOnce
}

/// What a ``ServiceErrorHandler`` knows of the failed attempt.
public struct ServiceErrorContext: Sendable, Hashable {
    /// The API's ``API/name``.
    public let apiName: String
    /// The service.
    public let service: ServiceID
    /// The attempt that failed, from 1.
    public let attempt: Int

    /// Creates a context, for testing a handler on its own.
    public init(apiName: String, service: ServiceID, attempt: Int) {
        self.apiName = apiName
        self.service = service
        self.attempt = attempt
    }
}
