import HTTPTypes

/// The bookkeeping of one load's attempts and the decision after each failed one: deliver the
/// failure, wait and try again, or wait for the network to come back. A plain value with no I/O
/// (the shape of ``LoadBook``), so that every rule is unit-tested on its own; the engine's attempt
/// loop does what it says.
///
/// Three kinds of attempt are the engine's own business and never count against the API's
/// ``RetryPolicy``: the one sent again after the signer corrected its clock, the one sent again
/// with a renewed credential, and the one the service's error handler asked for. Each happens at
/// most once per load.
struct RetryState: Sendable {
    /// What follows a failed attempt.
    enum Step: Equatable, Sendable {
        /// The failure is the load's outcome.
        case deliver
        /// Try again after this wait.
        case retry(after: Duration)
        /// The device's network went away in flight: wait for it to come back, for at most this
        /// long, then try again (or deliver the failure if it does not).
        case waitForNetwork(atMost: Duration)
    }

    /// Attempts begun so far.
    private(set) var attempts = 0
    private(set) var renewals = 0
    private(set) var clockCorrections = 0
    private(set) var handlerRetries = 0

    /// Begins the next attempt and returns its number (1 for the first).
    mutating func begin() -> Int {
        attempts += 1
        return attempts
    }

    /// The number the API's retry policy sees for the current attempt: attempts less the
    /// engine's own re-sends.
    var policyAttempt: Int { attempts - renewals - clockCorrections - handlerRetries }

    /// Whether a request refused for the device's clock is signed again and resent: once per load.
    mutating func takeClockCorrection() -> Bool {
        guard clockCorrections == 0 else { return false }
        clockCorrections += 1
        return true
    }

    /// Whether a refused credential may still be renewed: once per load; a second refusal is the
    /// server refusing the renewed one.
    var mayRenewCredential: Bool { renewals == 0 }

    /// Counts a renewal of the credential.
    mutating func recordRenewal() {
        renewals += 1
    }

    /// Whether the service's error handler's "retry once" is honoured: once per load.
    mutating func takeHandlerRetry() -> Bool {
        guard handlerRetries == 0 else { return false }
        handlerRetries += 1
        return true
    }

    /// What follows the current attempt, which failed with `error`.
    ///
    /// - parameters:
    ///   - retryAfter: The wait the answer's `Retry-After` asked for.
    ///   - now: The time now, on the clock of `loadDeadline`.
    ///   - loadDeadline: The end of the API's `totalTimeout`: a retry whose wait would reach it
    ///     is not made.
    ///   - reachable: Whether the device's network is reachable now.
    ///   - pathWentAway: Whether the attempt was sent and then ended because the network went
    ///     away (a load that found no network before sending anything fails at once).
    ///   - generator: The random numbers of the wait's jitter.
    func next(
        after error: RunwayError, policy: RetryPolicy, method: HTTPRequest.Method, retryAfter: Duration?,
        now: ContinuousClock.Instant, loadDeadline: ContinuousClock.Instant?, reachable: Bool, pathWentAway: Bool,
        using generator: inout some RandomNumberGenerator
    ) -> Step {
        guard policy.shouldRetry(after: error, method: method, attempt: policyAttempt) else { return .deliver }
        let delay = policy.delay(afterAttempt: policyAttempt, retryAfter: retryAfter, using: &generator)
        if let loadDeadline, now + delay >= loadDeadline { return .deliver }
        guard reachable else {
            // A Wi-Fi handover or a tunnel: the policy's wait for the network to come back.
            return pathWentAway ? .waitForNetwork(atMost: delay) : .deliver
        }
        return .retry(after: delay)
    }
}
