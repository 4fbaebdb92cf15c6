import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

@Suite("Coalescing identical in-flight loads")
@MainActor
struct CoalescingTests {
    @Test("100 concurrent identical loads make one server request")
    func hundredLoadsOneRequest() async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            let watch = JoinWatch()
            watch.install(on: harness.engine)
            var api = AdHocAPI(path: "/faults/gate/shared")
            api.cachePolicy = .memory()
            let managers = (0..<100).map { _ in APIManager(api, engine: harness.engine) }
            let loads = managers.map { manager in Task { try await manager.load(with: ["page": 1]) } }
            await watch.wait(for: 100)
            harness.probe.openGate("shared")
            var delivered = 0
            for load in loads {
                let response = try await load.value
                #expect(response.json?["data"]?["gate"] == "shared")
                delivered += 1
            }
            #expect(delivered == 100)
            #expect(harness.probe.count("/faults/gate/shared") == 1)
        }
    }

    @Test("cancelling one waiting manager leaves the shared call to the others")
    func cancellingOneWaiter() async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            let watch = JoinWatch()
            watch.install(on: harness.engine)
            var api = AdHocAPI(path: "/faults/gate/kept")
            api.cachePolicy = .memory()
            let leaving = APIManager(api, engine: harness.engine)
            let staying = APIManager(api, engine: harness.engine)
            let leavingDelegate = RecordingDelegate()
            leaving.delegate = leavingDelegate
            leaving.loadData()
            let kept = Task { try await staying.load() }
            await watch.wait(for: 2)
            leaving.cancelAllRequests()
            await leavingDelegate.waitForEvents(1)
            #expect(leavingDelegate.events[0].error == .cancelled)
            harness.probe.openGate("kept")
            let response = try await kept.value
            #expect(response.json?["data"]?["gate"] == "kept")
            #expect(harness.probe.count("/faults/gate/kept") == 1)
        }
    }

    @Test("a manager cancelling an async load that joined a shared call leaves the call to the others")
    func cancellingOneAsyncWaiter() async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            let watch = JoinWatch()
            watch.install(on: harness.engine)
            var api = AdHocAPI(path: "/faults/gate/kept-async")
            api.cachePolicy = .memory()
            let leaving = APIManager(api, engine: harness.engine)
            let staying = APIManager(api, engine: harness.engine)
            let kept = Task { try await staying.load() }
            await watch.wait(for: 1)
            let left = Task { try await leaving.load() }
            await watch.wait(for: 2)
            // The async load runs in its caller's task; its manager makes it leave the call.
            leaving.cancelAllRequests()
            await #expect(throws: RunwayError.cancelled) { try await left.value }
            harness.probe.openGate("kept-async")
            let response = try await kept.value
            #expect(response.json?["data"]?["gate"] == "kept-async")
            #expect(harness.probe.count("/faults/gate/kept-async") == 1)
        }
    }

    @Test("when every waiter is gone the shared call is cancelled on the wire")
    func lastWaiterCancels() async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            var api = AdHocAPI(path: "/faults/hang")
            api.cachePolicy = .memory()
            let manager = APIManager(api, engine: harness.engine)
            let task = Task { try await manager.load() }
            await harness.probe.wait(for: .holdStarted)
            task.cancel()
            await #expect(throws: RunwayError.cancelled) { try await task.value }
            await harness.probe.wait(for: .holdClosed)
        }
    }

    @Test("a load arriving as the last waiter leaves starts its own call and is never cancelled by the one leaving")
    nonisolated func leaveAndArriveTogether() async throws {
        let coalescer = CallCoalescer()
        let answer = RawResponse(
            api: AdHocAPI(path: "/x"), request: HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/x"),
            response: HTTPResponse(status: .ok), body: Data(), json: nil)
        let (joins, joined) = AsyncStream<Void>.makeStream()
        coalescer.joined.withLock { $0 = { _, _ in joined.yield() } }
        var joinIterator = joins.makeAsyncIterator()
        var wronglyCancelled = 0
        for _ in 0..<300 {
            let leaving = Task {
                await coalescer.run("k") {
                    try? await Task.sleep(for: .milliseconds(10))
                    return .init(result: Task.isCancelled ? .failure(.cancelled) : .success(answer))
                }
            }
            _ = await joinIterator.next()
            async let arriving = coalescer.run("k") { .init(result: .success(answer)) }
            leaving.cancel()
            if case .failure(.cancelled) = await arriving.result { wronglyCancelled += 1 }
            _ = await joinIterator.next()
            _ = await leaving.value
        }
        #expect(wronglyCancelled == 0)
    }
}
