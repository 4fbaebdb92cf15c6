import Foundation
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// A server that is briefly unavailable: the engine retries with backoff and waits as long
    /// as `Retry-After` asks; a business error is never retried.
    static let retries = DemoChapter("retries", "Retries (seed 003: 重試)") { context, log in
        var api = AdHocAPI("FlakyAPI", path: "/faults/flaky")
        api.retryPolicy = RetryPolicy(maximumRetries: 3, baseDelay: .milliseconds(100))
        let key = "demo-\(UUID().uuidString.prefix(8))"
        let started = ContinuousClock.now
        let response = try await context.engine.perform(api, params: ["key": .string(key), "failures": 2, "retry_after": 1]).get()
        let waited = (ContinuousClock.now - started).milliseconds
        log.say("the server answers 503 with Retry-After: 1 twice, then 200")
        log.say("→ \(response.status.code) after \(response.attempts) attempts in \(oneDecimal(waited / 1000)) s (the engine waited as asked)")

        var never = api
        never.name = "FlakyNoRetryAPI"
        never.retryPolicy = .never
        let failed = await context.engine.perform(never, params: ["key": .string(key + "-never"), "failures": 1])
        log.say("the same fault with RetryPolicy.never → \(DemoChapter.describe(failed)) after 1 attempt")
        log.figure("attempts", .int(response.attempts))
        log.figure("waitedMilliseconds", .double(waited.rounded()))
        try log.require(response.attempts == 3, "expected 3 attempts, saw \(response.attempts)")
        try log.require(waited >= 2000, "the engine did not wait as Retry-After asked (\(Int(waited)) ms)")
        try log.require(failed.isFailure(\.isTransient), "the unretried load should fail with the 503")
    }
}
