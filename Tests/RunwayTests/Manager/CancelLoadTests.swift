import Foundation
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// `APIManager.cancel(_:)`: one load ended on purpose, the others left alone.
@Suite("Cancelling one load", .timeLimit(.minutes(10)))
@MainActor
struct CancelLoadTests {
    /// Records the id of every call an API makes, as an app's interceptor would.
    final class CallIDs: Interceptor {
        private(set) var ids: [LoadID] = []
        func afterCall(_ call: CallInfo) { ids.append(call.loadID) }
    }

    @Test("cancel(id) delivers that load as cancelled once and closes its connection; a load beside it goes on", arguments: TransportKind.allCases)
    func cancelsOneDelegateLoad(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/hang"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let hanging = try #require(manager.loadData())
            await harness.probe.wait(for: .holdStarted)
            manager.api = AdHocAPI(path: "/faults/gate/beside")
            let beside = try #require(manager.loadData())
            await harness.probe.wait(for: .gateWaiting)

            #expect(manager.cancel(hanging))
            #expect(delegate.events.isEmpty, "delivered later, never from inside cancel")
            await delegate.waitForEvents(1)
            #expect(delegate.events.first?.error == .cancelled)
            #expect(delegate.loads.first == hanging)
            await harness.probe.wait(for: .holdClosed)  // the server saw the client leave
            #expect(manager.isLoading, "the other load is still in flight")
            #expect(!manager.cancel(hanging), "a load already ended is left alone")

            harness.probe.openGate("beside")
            await delegate.waitForEvents(2)
            #expect(delegate.events.count == 2)
            #expect(delegate.events[1].isSuccess && delegate.loads[1] == beside)
            #expect(!manager.cancel(beside))
            #expect(!manager.cancel(LoadID(rawValue: .max)))
        }
    }

    @Test("cancel(id) of an awaited load throws cancelled in its caller and closes its connection", arguments: TransportKind.allCases)
    func cancelsOneAwaitedLoad(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            var api = AdHocAPI(path: "/faults/hang")
            let calls = CallIDs()
            api.interceptors = [calls]
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let caller = Task { try await manager.load() }
            await harness.probe.wait(for: .holdStarted)
            let id = try #require(calls.ids.first)
            #expect(manager.cancel(id))
            await #expect(throws: RunwayError.cancelled) { try await caller.value }
            await harness.probe.wait(for: .holdClosed)
            #expect(!manager.isLoading)
            #expect(delegate.events.isEmpty, "an awaited load is the caller's, not the delegate's")
        }
    }
}
