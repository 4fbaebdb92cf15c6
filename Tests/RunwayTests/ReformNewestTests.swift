import Foundation
import Runway
import RunwayExamples
import RunwayServer
import Testing

/// Reformed values in load order: a reform that finishes after a newer load succeeded does not
/// come back, so a view never shows an older answer over a newer one.
@Suite("Reforming the newest load only")
@MainActor
struct ReformNewestTests {
    /// The gate's key from its answer.
    struct GateName: Reformer {
        func reform(_ response: RawResponse) throws -> String { response.json?["data"]?["gate"]?.stringValue ?? "?" }
    }

    @Test("an older load's value, reformed after a newer load succeeded, is nil; the newer one's is returned", arguments: TransportKind.allCases)
    func olderValueIsDropped(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = APIManager(TestAPI(path: "/faults/gate/older"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let older = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)
            manager.api = TestAPI(path: "/faults/gate/newer")
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
            let manager = APIManager(TestAPI(path: "/faults/gate/first-sent"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let older = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)
            manager.api = TestAPI(path: "/faults/gate/second-sent")
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
}
