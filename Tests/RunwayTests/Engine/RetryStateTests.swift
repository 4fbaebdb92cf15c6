import HTTPTypes
import RunwayTestSupport
import Testing
@testable import Runway

/// The engine's attempt bookkeeping and its decision after a failed attempt, as a plain value
/// with no I/O.
@Suite("RetryState", .timeLimit(.minutes(10)))
struct RetryStateTests {
    /// Two retries, 100 ms doubling, no jitter: every wait is exact.
    let policy = RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(100), maximumDelay: .seconds(1), jitter: 0)
    let now = ContinuousClock.now
    let unavailable = RunwayError.httpStatus(code: 503, body: .init())

    func next(
        _ state: RetryState, _ error: RunwayError, method: HTTPRequest.Method = .get, retryAfter: Duration? = nil,
        deadline: Duration? = nil, reachable: Bool = true, wentAway: Bool = false, policy: RetryPolicy? = nil
    ) -> RetryState.Step {
        var generator = SystemRandomNumberGenerator()
        return state.next(
            after: error, policy: policy ?? self.policy, method: method, retryAfter: retryAfter, now: now,
            loadDeadline: deadline.map { now + $0 }, reachable: reachable, pathWentAway: wentAway, using: &generator)
    }

    @Test("a transient failure of a GET is retried after the backoff, doubling, until the policy's retries are spent")
    func backoff() {
        var state = RetryState()
        #expect(state.begin() == 1)
        #expect(next(state, unavailable) == .retry(after: .milliseconds(100)))
        #expect(state.begin() == 2)
        #expect(next(state, unavailable) == .retry(after: .milliseconds(200)))
        #expect(state.begin() == 3)
        #expect(next(state, unavailable) == .deliver, "two retries, then the failure is the outcome")
    }

    @Test("what another attempt cannot fix, and a POST, are delivered at once")
    func notRetried() {
        var state = RetryState()
        _ = state.begin()
        #expect(next(state, .httpStatus(code: 404, body: .init())) == .deliver)
        #expect(next(state, .business(code: 1001, message: "no")) == .deliver)
        #expect(next(state, unavailable, method: .post) == .deliver)
        let postsToo = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(100), retriesNonIdempotentMethods: true, jitter: 0)
        #expect(next(state, unavailable, method: .post, policy: postsToo) == .retry(after: .milliseconds(100)))
    }

    @Test("Retry-After lengthens the wait, never past the policy's cap")
    func retryAfter() {
        var state = RetryState()
        _ = state.begin()
        #expect(next(state, unavailable, retryAfter: .milliseconds(700)) == .retry(after: .milliseconds(700)))
        #expect(next(state, unavailable, retryAfter: .seconds(3600)) == .retry(after: .seconds(1)))
        #expect(next(state, unavailable, retryAfter: .milliseconds(10)) == .retry(after: .milliseconds(100)))
    }

    @Test("a wait that would reach the load's total deadline is not made")
    func totalDeadline() {
        var state = RetryState()
        _ = state.begin()
        #expect(next(state, unavailable, deadline: .milliseconds(100)) == .deliver)
        #expect(next(state, unavailable, deadline: .milliseconds(101)) == .retry(after: .milliseconds(100)))
    }

    @Test("no network: a load that found none fails now; one whose network went away in flight waits for it")
    func network() {
        var state = RetryState()
        _ = state.begin()
        #expect(next(state, .timeout, reachable: false) == .deliver)
        #expect(next(state, .timeout, reachable: false, wentAway: true) == .waitForNetwork(atMost: .milliseconds(100)))
        #expect(next(state, .timeout, reachable: true, wentAway: true) == .retry(after: .milliseconds(100)))
    }

    @Test("a clock correction, a credential renewal and the error handler's retry happen once each and are not the policy's")
    func enginesOwnResends() {
        var state = RetryState()
        _ = state.begin()
        let corrected = (state.takeClockCorrection(), state.takeClockCorrection())
        #expect(corrected == (true, false), "once per load")
        _ = state.begin()
        #expect(state.mayRenewCredential)
        state.recordRenewal()
        #expect(!state.mayRenewCredential, "a second refusal is the server refusing the renewed credential")
        _ = state.begin()
        let handled = (state.takeHandlerRetry(), state.takeHandlerRetry())
        #expect(handled == (true, false), "once per load")
        _ = state.begin()
        #expect(state.attempts == 4)
        #expect(state.policyAttempt == 1, "the three re-sends are the engine's own")
        #expect(next(state, unavailable) == .retry(after: .milliseconds(100)), "the policy's first retry is still to come")
    }

    @Test("the wait is drawn from the upper part of the backoff, as the jitter says")
    func jitter() {
        var state = RetryState()
        _ = state.begin()
        let jittered = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(100), jitter: 0.5)
        for _ in 0..<50 {
            guard case .retry(let wait) = next(state, unavailable, policy: jittered) else {
                Issue.record("not retried")
                return
            }
            #expect(wait >= .milliseconds(50) && wait <= .milliseconds(100))
        }
    }
}
