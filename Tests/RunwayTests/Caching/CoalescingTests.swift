import Foundation
import HTTPTypes
import Runway
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

@Suite("Coalescing identical in-flight loads", .timeLimit(.minutes(10)))
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
            let kept = Task { try await staying.load() }
            await watch.wait(for: 1)
            leaving.loadData()
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

    @Test("when the load that sent the shared call leaves, a load still waiting sends it again and gets its answer", arguments: [true, false])
    func leaderLeaves(cached: Bool) async throws {
        let cache = try ResponseCache()
        try await withHarness(cache: cache) { harness in
            let watch = JoinWatch()
            watch.install(on: harness.engine)
            var api = AdHocAPI(path: "/faults/gate/handed-over")
            if cached { api.cachePolicy = .memory() }
            let leaving = APIManager(api, engine: harness.engine)
            let staying = APIManager(api, engine: harness.engine)
            let leavingDelegate = RecordingDelegate()
            leaving.delegate = leavingDelegate
            leaving.loadData()
            await watch.wait(for: 1)
            let kept = Task { try await staying.load() }
            await watch.wait(for: 2)
            await harness.probe.wait(for: .gateWaiting)
            leaving.cancelAllRequests()
            await leavingDelegate.waitForEvents(1)
            #expect(leavingDelegate.events[0].error == .cancelled)
            // The waiting load's own request: not the cancellation of the one that left.
            await harness.probe.wait(for: .gateWaiting, count: 2)
            harness.probe.openGate("handed-over")
            let response = try await kept.value
            #expect(response.json?["data"]?["gate"] == "handed-over")
            #expect(harness.probe.count("/faults/gate/handed-over") == 2)
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
        let (coalescer, joins) = Self.watchedCoalescer()
        let answer = Self.answer
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

    @Test("a safe call whose leader leaves is run again by a load waiting for it, never handed the leader's cancellation")
    nonisolated func leadHandsOver() async throws {
        let (coalescer, joins) = Self.watchedCoalescer()
        let answer = Self.answer
        var joinIterator = joins.makeAsyncIterator()
        for _ in 0..<100 {
            let leaving = Task {
                await coalescer.lead("k", cancellation: nil, onJoin: nil) {
                    // Waits until cancelled: only the leader's leaving ends it.
                    try? await Task.sleep(for: .seconds(600))
                    return .init(result: Task.isCancelled ? .failure(.cancelled) : .success(answer))
                }
            }
            #expect(await joinIterator.next() == 1)
            async let arriving = coalescer.lead("k", cancellation: nil, onJoin: nil) { .init(result: .success(answer)) }
            #expect(await joinIterator.next() == 2)
            leaving.cancel()
            let (outcome, led) = await arriving
            #expect(led)
            #expect(!outcome.isCancelled)
            let left = await leaving.value
            #expect(left.outcome.isCancelled && left.led)
        }
    }

    /// A coalescer that tells, for each load that joins or starts a call, how many share it.
    nonisolated static func watchedCoalescer() -> (CallCoalescer, AsyncStream<Int>) {
        let coalescer = CallCoalescer()
        let (joins, joined) = AsyncStream<Int>.makeStream()
        coalescer.joined.withLock { $0 = { _, count in joined.yield(count) } }
        return (coalescer, joins)
    }

    /// Any answer: what a call that was not cancelled delivers.
    nonisolated static let answer = RawResponse(
        api: AdHocAPI(path: "/x"), request: HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/x"),
        response: HTTPResponse(status: .ok), body: Data(), json: nil)
}
