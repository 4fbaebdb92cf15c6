import Foundation
import Runway
import RunwayExamples
import RunwayServer
import RunwayTestSupport
import Testing

/// Reformed values in load order: a reform that finishes after a newer load succeeded does not
/// come back, so a view never shows an older answer over a newer one.
@Suite("Reforming the newest load only", .timeLimit(.minutes(10)))
@MainActor
struct ReformNewestTests {
    /// The gate's key from its answer.
    struct GateName: Reformer {
        func reform(_ response: RawResponse) throws -> String { response.json?["data"]?["gate"]?.stringValue ?? "?" }
    }

    @Test("an older load's value, reformed after a newer load succeeded, is nil; the newer one's is returned", arguments: TransportKind.allCases)
    func olderValueIsDropped(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/gate/older"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let older = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)
            manager.api = AdHocAPI(path: "/faults/gate/newer")
            let newer = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting, count: 2)

            // The older answers first: reformed before the newer succeeds, it is current.
            harness.probe.openGate("older")
            await delegate.waitForEvents(1)
            let olderResponse = try #require(manager.rawResponse)
            #expect(try await manager.reformNewest(olderResponse, of: older, with: GateName()) == "older")

            // Once the newer has succeeded, the older's value is stale, whenever its reform ends.
            harness.probe.openGate("newer")
            await delegate.waitForEvents(2)
            let newerResponse = try #require(manager.rawResponse)
            #expect(delegate.loads == [older, newer])
            #expect(try await manager.reformNewest(olderResponse, of: older, with: GateName()) == nil)
            #expect(try await manager.reformNewest(newerResponse, of: newer, with: GateName()) == "newer")
            // The plain reform has no such rule: it is what could show the older answer last.
            #expect(try await manager.reform(olderResponse, with: GateName()) == "older")
        }
    }

    @Test("a newer load that arrives first makes an older one that arrives later stale at once", arguments: TransportKind.allCases)
    func outOfOrderArrival(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/gate/first-sent"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let older = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)
            manager.api = AdHocAPI(path: "/faults/gate/second-sent")
            let newer = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting, count: 2)
            harness.probe.openGate("second-sent")
            await delegate.waitForEvents(1)
            let newerResponse = try #require(manager.rawResponse)
            harness.probe.openGate("first-sent")
            await delegate.waitForEvents(2)
            let olderResponse = try #require(manager.rawResponse)
            #expect(delegate.loads == [newer, older])
            #expect(try await manager.reformNewest(olderResponse, of: older, with: GateName()) == nil)
            #expect(try await manager.reformNewest(newerResponse, of: newer, with: GateName()) == "second-sent")
        }
    }

    /// The gate's key; the first call holds its thread until released (a reform still running
    /// when the next answer lands).
    final class HeldOnce: Reformer, @unchecked Sendable {
        let entered = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        private let calls = TestBox(0)
        func reform(_ response: RawResponse) throws -> String {
            if calls.mutate({ count -> Int in
                count += 1
                return count
            }) == 1 {
                entered.continuation.yield()
                release.wait()
            }
            return try GateName().reform(response)
        }
    }

    @Test("reformLastResponse(with:) returns the answer the manager holds when it returns, even when a newer one landed while it ran")
    func reformLastResponseFollowsTheNewest() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/gate/first"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData()
            harness.probe.openGate("first")
            await delegate.waitForEvents(1)

            let reformer = HeldOnce()
            let fetching = Task { try await manager.reformLastResponse(with: reformer) }
            _ = await reformer.entered.stream.first(1)
            manager.api = AdHocAPI(path: "/faults/gate/second")
            manager.loadData()
            harness.probe.openGate("second")
            await delegate.waitForEvents(2)
            reformer.release.signal()
            let value = try await fetching.value
            #expect(value == "second")
        }
    }
}
