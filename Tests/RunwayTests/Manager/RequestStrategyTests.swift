import Foundation
import Runway
import RunwayTestSupport
import Testing

@Suite("Request strategies while a load is in flight", .timeLimit(.minutes(10)))
@MainActor
struct RequestStrategyTests {
    @Test("ignore-new: the second load is not sent; an async caller gets the in-flight load's outcome")
    func ignoreNew() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/faults/gate/refresh")
            api.requestStrategy = .ignoreNewWhileLoading
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            #expect(manager.loadData() != nil)
            await harness.probe.wait(for: .gateWaiting)
            #expect(manager.loadData() == nil, "the refresh is ignored while one is in flight")
            let joined = Task { try await manager.load() }
            // The main actor runs its jobs in order: once this one has run, `joined` has joined.
            await Task { @MainActor in }.value
            harness.probe.openGate("refresh")
            let response = try await joined.value
            #expect(response.json?["data"]?["gate"] == "refresh")
            await delegate.waitForEvents(1)
            #expect(delegate.events.count == 1)
            #expect(delegate.events[0].isSuccess)
            #expect(harness.probe.count("/faults/gate/refresh") == 1, "one request served three callers")
        }
    }

    /// A manager of a gated refresh API (`.ignoreNewWhileLoading`) with a recording delegate.
    func refreshManager(_ harness: Harness, gate: String) -> (APIManager<AdHocAPI>, RecordingDelegate) {
        var api = AdHocAPI(path: "/faults/gate/\(gate)")
        api.requestStrategy = .ignoreNewWhileLoading
        let manager = APIManager(api, engine: harness.engine)
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        return (manager, delegate)
    }

    @Test("ignore-new: a delegate load that joins an async load in flight is delivered to the delegate", .timeLimit(.minutes(10)))
    func delegateJoinsAsync() async throws {
        try await withHarness { harness in
            let (manager, delegate) = refreshManager(harness, gate: "join-async")
            let inFlight = Task { try await manager.load() }
            await harness.probe.wait(for: .gateWaiting)
            #expect(manager.loadData() == nil, "the refresh joins the load in flight")
            harness.probe.openGate("join-async")
            _ = try await inFlight.value
            await delegate.waitForEvents(1)
            #expect(delegate.events.count == 1)
            #expect(delegate.events[0].isSuccess, "the refresh spinner must stop")
            #expect(harness.probe.count("/faults/gate/join-async") == 1)
        }
    }

    @Test("ignore-new: the async caller leaving does not cancel a load a joined delegate still waits for", .timeLimit(.minutes(10)))
    func asyncLeavesDelegateStays() async throws {
        try await withHarness { harness in
            let (manager, delegate) = refreshManager(harness, gate: "join-leave")
            let inFlight = Task { try await manager.load() }
            await harness.probe.wait(for: .gateWaiting)
            manager.loadData()
            inFlight.cancel()
            await #expect(throws: RunwayError.cancelled) { try await inFlight.value }
            // Let the manager see the async caller leave before the answer can arrive.
            await Task { @MainActor in }.value
            #expect(manager.isLoading, "the delegate still waits for the load")
            harness.probe.openGate("join-leave")
            await delegate.waitForEvents(1)
            #expect(delegate.events[0].isSuccess)
            #expect(harness.probe.count("/faults/gate/join-leave") == 1)
        }
    }

    @Test("ignore-new: an async caller that joins a delegate load and leaves does not cancel it", .timeLimit(.minutes(10)))
    func asyncJoinsDelegateAndLeaves() async throws {
        try await withHarness { harness in
            let (manager, delegate) = refreshManager(harness, gate: "join-delegate")
            #expect(manager.loadData() != nil)
            await harness.probe.wait(for: .gateWaiting)
            let joined = Task { try await manager.load() }
            await Task { @MainActor in }.value
            joined.cancel()
            await #expect(throws: RunwayError.cancelled) { try await joined.value }
            await Task { @MainActor in }.value
            #expect(manager.isLoading)
            harness.probe.openGate("join-delegate")
            await delegate.waitForEvents(1)
            #expect(delegate.events[0].isSuccess)
        }
    }

    @Test("cancel-in-flight: the old load is cancelled on the wire and delivered as cancelled; the new one lands")
    func cancelInFlight() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/faults/hang")
            api.requestStrategy = .cancelInFlight
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData()
            await harness.probe.wait(for: .holdStarted)
            manager.api.path = "/echo/filtered"
            manager.loadData(with: ["price": "0-500"])
            await harness.probe.wait(for: .holdClosed)
            await delegate.waitForEvents(2)
            #expect(delegate.events.count == 2)
            #expect(delegate.events[0].error == .cancelled)
            guard case .success(let response?) = delegate.events[1] else {
                Issue.record("the new load should succeed")
                return
            }
            #expect(response.json?["query"] == "price=0-500")
        }
    }

    @Test("allow-concurrent: both loads fly and each is delivered once")
    func allowConcurrent() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/echo/both"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData(with: ["n": 1])
            manager.loadData(with: ["n": 2])
            await delegate.waitForEvents(2)
            let queries = delegate.events.compactMap { event -> String? in
                guard case .success(let response?) = event else { return nil }
                return response.json?["query"]?.stringValue
            }
            #expect(Set(queries) == ["n=1", "n=2"])
            #expect(harness.probe.count("/echo") == 2)
        }
    }

    @Test("cancelling the awaiting task cancels its load on the wire")
    func taskCancellation() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/hang"), engine: harness.engine)
            let task = Task { try await manager.load() }
            await harness.probe.wait(for: .holdStarted)
            task.cancel()
            await #expect(throws: RunwayError.cancelled) { try await task.value }
            await harness.probe.wait(for: .holdClosed)
            #expect(!manager.isLoading)
        }
    }
}
