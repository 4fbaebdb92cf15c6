import Foundation
@testable import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// A load in flight when the device's network goes away ends at once with `noNetwork`, instead
/// of waiting out its timeout; one its policy retries waits the policy's delay for the network
/// and goes again as soon as it is back. The path is driven by hand here; the network-namespace
/// test in ``NetworkMonitorTests`` takes a real link down.
@Suite("A load in flight when the network goes", .timeLimit(.minutes(10)))
struct InFlightPathLossTests {
    @Test("It ends with noNetwork(.unreachable) when the path goes, not at its timeout", arguments: TransportKind.allCases)
    func lossEndsTheLoad(_ kind: TransportKind) async throws {
        let monitor = NetworkMonitor(path: .wired)
        try await withHarness(kind, network: monitor) { harness in
            let key = "loss-\(kind)"
            defer { harness.server.probe.openGate(key) }
            let api = AdHocAPI(path: "/faults/gate/\(key)", timeout: .seconds(40))
            let load = Task { await harness.engine.perform(api, params: [:]) }
            await harness.server.probe.wait(for: .gateWaiting)
            monitor.update(.unreachable)
            let result = await load.value
            #expect(throws: RunwayError.noNetwork(reason: .unreachable)) { try result.get() }
            #expect(harness.server.probe.count("/faults/gate/\(key)") == 1)
        }
    }

    @Test("A retried load waits the policy's delay for the path and goes again the moment it returns", arguments: TransportKind.allCases)
    func retriedWhenThePathReturns(_ kind: TransportKind) async throws {
        let monitor = NetworkMonitor(path: .wired)
        // The policy's wait never ends by itself: only the path's return can end it.
        let (waits, waited) = AsyncStream<Duration>.makeStream()
        let sleep: @Sendable (Duration) async throws -> Void = { delay in
            waited.yield(delay)
            try await Task.sleep(for: .seconds(3600))
        }
        try await withHarness(kind, sleep: sleep, network: monitor) { harness in
            let key = "return-\(kind)"
            let api = AdHocAPI(
                path: "/faults/gate/\(key)", timeout: .seconds(40),
                retryPolicy: RetryPolicy(maximumRetries: 2, baseDelay: .seconds(5), jitter: 0))
            let load = Task { await harness.engine.perform(api, params: [:]) }
            await harness.server.probe.wait(for: .gateWaiting)
            monitor.update(.unreachable)
            #expect(await waits.first(1) == [.seconds(5)], "the policy's first delay")
            harness.server.probe.openGate(key)
            monitor.update(.wired)
            let response = try await load.value.get()
            #expect(response.attempts == 2)
            #expect(harness.server.probe.count("/faults/gate/\(key)") == 2)
        }
    }

    @Test("A retried load whose path stays away ends with noNetwork after the policy's wait")
    func notBackInTime() async throws {
        let monitor = NetworkMonitor(path: .wired)
        // The policy's wait is over at once, the path still away.
        try await withHarness(sleep: { _ in }, network: monitor) { harness in
            defer { harness.server.probe.openGate("away") }
            let api = AdHocAPI(
                path: "/faults/gate/away", timeout: .seconds(40),
                retryPolicy: RetryPolicy(maximumRetries: 2, baseDelay: .seconds(5), jitter: 0))
            let load = Task { await harness.engine.perform(api, params: [:]) }
            await harness.server.probe.wait(for: .gateWaiting)
            monitor.update(.unreachable)
            let result = await load.value
            #expect(throws: RunwayError.noNetwork(reason: .unreachable)) { try result.get() }
            #expect(harness.server.probe.count("/faults/gate/away") == 1)
        }
    }
}
