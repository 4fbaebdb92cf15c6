import Foundation
import HTTPTypes
@testable import Runway
import RunwayTestSupport
import Testing

@Suite("Retries with backoff", .timeLimit(.minutes(10)))
@MainActor
struct RetryTests {
    /// Records each wait the engine asks for and returns at once.
    final class SleepRecorder: Sendable {
        let waits = TestBox<[Duration]>([])
        var sleep: @Sendable (Duration) async throws -> Void {
            { [waits] duration in waits.mutate { $0.append(duration) } }
        }
    }

    /// Records the attempt number of every signing: each attempt is prepared and signed afresh.
    struct AttemptSigner: RequestSigner {
        let attempts = TestBox<[Int]>([])
        func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
            attempts.mutate { $0.append(context.attempt) }
            request.headerFields[.init("X-Attempt")!] = String(context.attempt)
        }
    }

    @Test("a GET is retried on 503 with exponential backoff, each attempt signed afresh", arguments: TransportKind.allCases)
    func retriesTransientStatus(_ transport: TransportKind) async throws {
        let recorder = SleepRecorder()
        try await withHarness(transport, sleep: recorder.sleep) { harness in
            let signer = AttemptSigner()
            try harness.registerServices(signer: signer)
            var api = AdHocAPI(path: "/faults/flaky")
            api.retryPolicy = .default
            let response = try await APIManager(api, engine: harness.engine).load(with: ["key": "a", "failures": 2])
            #expect(response.json?["data"]?["attempt"] == 3)
            #expect(response.attempts == 3)
            #expect(response.request.headerFields[.init("X-Attempt")!] == "3")
            #expect(signer.attempts.value == [1, 2, 3])
            // Doubling from 500 ms, each wait somewhere in the upper half of its backoff.
            let waits = recorder.waits.value
            #expect(waits.count == 2)
            #expect(waits.first.map { $0 >= .milliseconds(250) && $0 <= .milliseconds(500) } == true, "\(waits)")
            #expect(waits.last.map { $0 >= .milliseconds(500) && $0 <= .seconds(1) } == true, "\(waits)")
        }
    }

    @Test("after the last retry the failure is delivered", arguments: [408, 500, 502, 503, 504])
    func givesUp(_ status: Int) async throws {
        let recorder = SleepRecorder()
        try await withHarness(sleep: recorder.sleep) { harness in
            var api = AdHocAPI(path: "/faults/flaky")
            api.retryPolicy = .default
            await #expect {
                try await APIManager(api, engine: harness.engine).load(with: ["key": "k", "failures": 9, "status": .int(status)])
            } throws: { error in
                guard case .httpStatus(let code, _) = error as? RunwayError else { return false }
                return code == status
            }
            #expect(harness.probe.count("/faults/flaky/k") == 3, "one attempt and two retries")
        }
    }

    @Test("Retry-After is honoured when it asks for longer than the backoff")
    func honoursRetryAfter() async throws {
        let recorder = SleepRecorder()
        try await withHarness(sleep: recorder.sleep) { harness in
            var api = AdHocAPI(path: "/faults/flaky")
            api.retryPolicy = .default
            _ = try await APIManager(api, engine: harness.engine).load(with: ["key": "r", "failures": 1, "retry_after": 7])
            #expect(recorder.waits.value == [.seconds(7)])
        }
    }

    @Test("a lost connection is retried")
    func retriesLostConnection() async throws {
        let recorder = SleepRecorder()
        try await withHarness(sleep: recorder.sleep) { harness in
            var api = AdHocAPI(path: "/faults/drop")
            api.retryPolicy = .default
            let response = try await APIManager(api, engine: harness.engine).load(with: ["key": "d", "failures": 1])
            #expect(response.attempts == 2)
            #expect(harness.probe.count("/faults/drop/d") == 2)
        }
    }

    @Test("POST is not retried by default, and an API can opt out of retries altogether")
    func noRetryForPostOrOptOut() async throws {
        let recorder = SleepRecorder()
        try await withHarness(sleep: recorder.sleep) { harness in
            var post = AdHocAPI(path: "/faults/flaky", method: .post, paramEncoding: .query)
            post.retryPolicy = .default
            await #expect(throws: RunwayError.self) {
                try await APIManager(post, engine: harness.engine).load(with: ["key": "p", "failures": 1])
            }
            #expect(harness.probe.count("/faults/flaky/p") == 1, "a POST may have taken effect: never repeated")

            var optedOut = AdHocAPI(path: "/faults/flaky")
            optedOut.retryPolicy = .never
            await #expect(throws: RunwayError.self) {
                try await APIManager(optedOut, engine: harness.engine).load(with: ["key": "o", "failures": 1])
            }
            #expect(harness.probe.count("/faults/flaky/o") == 1)
            #expect(recorder.waits.value.isEmpty)
        }
    }

    @Test("a 4xx other than 408 is not retried")
    func noRetryOnClientError() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/faults/status/404")
            api.retryPolicy = .default
            await #expect(throws: RunwayError.self) { try await APIManager(api, engine: harness.engine).load() }
            #expect(harness.probe.count("/faults/status/404") == 1)
        }
    }

    @Test("waits are spread over the upper half of the backoff, so clients failed together do not return together; Retry-After is never cut short")
    func jitteredBackoff() {
        let policy = RetryPolicy(maximumRetries: 10, baseDelay: .seconds(1), maximumDelay: .seconds(30))
        var generator = SplitMix64(seed: 2026)
        let waits = (0..<1000).map { _ in policy.delay(afterAttempt: 3, retryAfter: nil, using: &generator) }
        #expect(waits.allSatisfy { $0 >= .seconds(2) && $0 <= .seconds(4) }, "between half the 4 s backoff and all of it")
        #expect(Set(waits).count > 900, "1,000 clients pick their own moments")
        #expect(waits.contains { $0 < .milliseconds(2200) } && waits.contains { $0 > .milliseconds(3800) })
        let told = (0..<1000).map { _ in policy.delay(afterAttempt: 3, retryAfter: .seconds(3), using: &generator) }
        #expect(told.allSatisfy { $0 >= .seconds(3) && $0 <= .seconds(4) })
        #expect(RetryPolicy(jitter: 7).jitter == 1 && RetryPolicy(jitter: -1).jitter == 0 && RetryPolicy(jitter: .nan).jitter == 0)
    }

    @Test("the backoff doubles and is capped, and Retry-After never exceeds the cap")
    func backoffMath() {
        let policy = RetryPolicy(maximumRetries: 10, baseDelay: .seconds(1), maximumDelay: .seconds(5), jitter: 0)
        #expect((1...5).map { policy.delay(afterAttempt: $0, retryAfter: nil) } == [
            .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5),
        ])
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(3)) == .seconds(3))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(3600)) == .seconds(5))
        #expect(policy.shouldRetry(after: .timeout, method: .put, attempt: 1))
        #expect(!policy.shouldRetry(after: .timeout, method: .patch, attempt: 1))
        #expect(!policy.shouldRetry(after: .timeout, method: .get, attempt: 11))
        #expect(!policy.shouldRetry(after: .business(code: 1, message: ""), method: .get, attempt: 1))
    }
}

