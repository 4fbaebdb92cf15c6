import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayServer
import RunwayTestSupport
import Testing

/// One deadline over the whole exchange: the head, every byte of the body, every attempt.
@Suite("Deadlines over the whole exchange", .timeLimit(.minutes(10)))
struct ExchangeDeadlineTests {
    @Test("a body that drips slower than the timeout fails with .timeout", arguments: TransportKind.allCases)
    func drippingBody(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            // 60 bytes, one every 100 ms: six seconds of body against a one-second timeout.
            let api = AdHocAPI(path: "/faults/drip", timeout: .seconds(1))
            let result = await harness.engine.perform(api, params: ["chunks": 60, "interval_ms": 100])
            #expect(throws: RunwayError.timeout) { try result.get() }
            // One deadline over every attempt: no second request. (On a loaded machine the
            // deadline can beat even the first one to the server.)
            #expect(harness.probe.count("/faults/drip") <= 1)
        }
    }

    @Test("a body that stalls after the head fails with .timeout and the connection is closed", arguments: TransportKind.allCases)
    func stalledBody(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let api = AdHocAPI(path: "/faults/stall", timeout: .seconds(1))
            let result = await harness.engine.perform(api, params: [:])
            #expect(throws: RunwayError.timeout) { try result.get() }
            await harness.probe.waitForClose(ifSeen: "/faults/stall")
        }
    }

    @Test("exchanges in flight each keep their own deadline: shorter ones after a long one still end on time", arguments: TransportKind.allCases)
    func deadlinesInFlightTogether(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let engine = harness.engine
            func hang(_ timeout: Duration) async -> Result<RawResponse, RunwayError> {
                await engine.perform(AdHocAPI(path: "/faults/hang", timeout: timeout), params: [:])
            }
            // Far past the suite's one-minute limit: if the shorter deadlines waited for its
            // timer, the test would fail by running out of time.
            let long = Task { await hang(.seconds(600)) }
            await harness.probe.wait(for: .holdStarted)
            async let first = hang(.milliseconds(300))
            async let second = hang(.milliseconds(600))
            #expect(await first.error == .timeout)
            #expect(await second.error == .timeout)
            // A deadline watched after the others expired arms the timer again.
            #expect(await hang(.milliseconds(200)).error == .timeout)
            long.cancel()
            #expect(await long.value.error == .cancelled)
        }
    }

    @Test("a total deadline skips a retry whose wait would end past it")
    func totalDeadlineSkipsLongBackoff() async throws {
        let slept = TestBox<[Duration]>([])
        try await withHarness(sleep: { duration in slept.mutate { $0.append(duration) } }) { harness in
            var api = AdHocAPI(path: "/faults/flaky")
            // A total deadline no busy machine's first attempt runs into, and a back-off (at
            // least half of 600 s, with jitter) that cannot fit in it.
            api.retryPolicy = RetryPolicy(maximumRetries: 3, baseDelay: .seconds(600), maximumDelay: .seconds(600))
            api.totalTimeout = .seconds(120)
            let result = await harness.engine.perform(api, params: ["key": "total", "failures": 5])
            guard case .failure(.httpStatus(503, _)) = result else {
                Issue.record("expected the attempt's 503, got \(result)")
                return
            }
            #expect(slept.value.isEmpty, "a 300–600 s back-off cannot fit a 120 s total deadline")
            #expect(harness.probe.count("/faults/flaky/total") == 1)

            // Without the total deadline the same load waits and retries.
            api.totalTimeout = nil
            _ = await harness.engine.perform(api, params: ["key": "unbounded", "failures": 5])
            #expect(slept.value.count == 3)
            #expect(harness.probe.count("/faults/flaky/unbounded") == 4)
        }
    }

    @Test("a total deadline cuts an attempt short even when the attempt's own timeout is longer", arguments: TransportKind.allCases)
    func totalDeadlineBoundsAttempt(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var api = AdHocAPI(path: "/faults/hang", timeout: .seconds(60))
            api.totalTimeout = .seconds(1)
            api.retryPolicy = RetryPolicy(maximumRetries: 5, baseDelay: .milliseconds(10))
            let result = await harness.engine.perform(api, params: [:])
            #expect(throws: RunwayError.timeout) { try result.get() }
            await harness.probe.waitForClose(ifSeen: "/faults/hang")
        }
    }
}
