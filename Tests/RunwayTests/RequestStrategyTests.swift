import Foundation
import Runway
import Testing

@Suite("Request strategies while a load is in flight")
@MainActor
struct RequestStrategyTests {
    @Test("ignore-new: the second load is not sent; an async caller gets the in-flight load's outcome")
    func ignoreNew() async throws {
        try await withHarness { harness in
            var api = TestAPI(path: "/faults/gate/refresh")
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

    @Test("cancel-in-flight: the old load is cancelled on the wire and delivered as cancelled; the new one lands")
    func cancelInFlight() async throws {
        try await withHarness { harness in
            var api = TestAPI(path: "/faults/hang")
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
            let manager = APIManager(TestAPI(path: "/echo/both"), engine: harness.engine)
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
            let manager = APIManager(TestAPI(path: "/faults/hang"), engine: harness.engine)
            let task = Task { try await manager.load() }
            await harness.probe.wait(for: .holdStarted)
            task.cancel()
            await #expect(throws: RunwayError.cancelled) { try await task.value }
            await harness.probe.wait(for: .holdClosed)
            #expect(!manager.isLoading)
        }
    }
}
