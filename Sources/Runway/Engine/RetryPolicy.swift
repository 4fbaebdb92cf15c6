import HTTPTypes

/// When a failed attempt is tried again, and how long to wait first.
///
/// Written as data so each API can state its own. The default retries only what is safe to
/// repeat: idempotent methods (a `POST` may have taken effect before the connection broke), on
/// errors that another attempt can fix (408, 5xx, timeouts, connections refused or lost). The
/// wait doubles each time from ``baseDelay``, capped at ``maximumDelay``, and is drawn at random
/// from its upper part (``jitter``), so that the many clients one outage failed together do not
/// come back together; a server's `Retry-After` (seconds) wins when it says to wait longer, up to
/// the same cap.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a failed attempt is retried; 0 never retries.
    public var maximumRetries: Int
    /// The wait before the first retry; doubled for each later one.
    public var baseDelay: Duration
    /// The longest wait between attempts, whatever `Retry-After` says.
    public var maximumDelay: Duration
    /// Whether non-idempotent methods (`POST`, `PATCH`) are retried too.
    public var retriesNonIdempotentMethods: Bool
    /// How much of each backoff is left to chance, from 0 (none: every client waits exactly the
    /// backoff) to 1 (anywhere from nothing to the backoff). Default 0.5: a wait falls between
    /// half the backoff and the whole of it.
    public var jitter: Double

    /// Creates a policy.
    public init(
        maximumRetries: Int = 2,
        baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30),
        retriesNonIdempotentMethods: Bool = false,
        jitter: Double = 0.5
    ) {
        self.maximumRetries = maximumRetries
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.retriesNonIdempotentMethods = retriesNonIdempotentMethods
        self.jitter = jitter.isNaN ? 0 : min(max(jitter, 0), 1)
    }

    /// Two retries of idempotent methods, from half a second, doubling.
    public static let `default` = RetryPolicy()

    /// No retries: the API's opt-out.
    public static let never = RetryPolicy(maximumRetries: 0)

    /// Whether the attempt numbered `attempt` (1 for the first), which failed with `error`,
    /// is followed by another. A 429 is not: how long to hold off is the caller's to decide (an
    /// operation log keeps its `Retry-After` across launches).
    func shouldRetry(after error: RunwayError, method: HTTPRequest.Method, attempt: Int) -> Bool {
        guard attempt <= maximumRetries, error.isTransient else { return false }
        return retriesNonIdempotentMethods || method.isIdempotent
    }

    /// The wait before the retry that follows attempt `attempt`: the backoff less a random part
    /// of it, but never less than the server's `Retry-After`.
    func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, retryAfter: retryAfter, using: &generator)
    }

    /// ``delay(afterAttempt:retryAfter:)`` with the random numbers from `generator`.
    func delay(afterAttempt attempt: Int, retryAfter: Duration?, using generator: inout some RandomNumberGenerator) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let backoff = min(baseDelay * (1 << exponent), maximumDelay)
        let share = jitter > 0 ? Double.random(in: 0...jitter, using: &generator) : 0
        let jittered = backoff * (1 - share)
        guard let retryAfter else { return jittered }
        return min(max(jittered, retryAfter), maximumDelay)
    }
}

extension HTTPRequest.Method {
    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace: return true
        default: return false
        }
    }
}
