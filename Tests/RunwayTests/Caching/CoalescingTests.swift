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
                await coalescer.lead(Self.known("k"), cancellation: nil) {
                    // Waits until cancelled: only the leader's leaving ends it.
                    try? await Task.sleep(for: .seconds(600))
                    return .init(result: Task.isCancelled ? .failure(.cancelled) : .success(answer))
                }
            }
            #expect(await joinIterator.next() == 1)
            async let arriving = coalescer.lead(Self.known("k"), cancellation: nil) {
                .init(result: .success(answer))
            }
            #expect(await joinIterator.next() == 2)
            leaving.cancel()
            let (outcome, led) = await arriving
            #expect(led)
            #expect(!outcome.isCancelled)
            let left = await leaving.value
            #expect(left.outcome.isCancelled && left.led)
        }
    }

    @Test("a load alone in flight never makes its key; one arriving beside it makes both, once, and joins only its equal")
    nonisolated func keysMadeOnlyBesideAnother() async throws {
        let (coalescer, joins) = Self.watchedCoalescer()
        var joinIterator = joins.makeAsyncIterator()
        let made = TestBox<[String]>([])
        let answer = Self.answer
        func identity(_ key: String) -> CallCoalescer.Identity {
            CallCoalescer.Identity(kind: ObjectIdentifier(AdHocAPI.self)) {
                made.mutate { $0.append(key) }
                return key
            }
        }
        let alone = await coalescer.lead(identity("a"), cancellation: nil) { .init(result: .success(answer)) }
        #expect(await joinIterator.next() == 1)
        #expect(alone.led)
        #expect(made.value.isEmpty, "a load alone never made its key")
        // A leader held open; an equal load joins it, a different one runs its own.
        let (gate, open) = AsyncStream<Void>.makeStream()
        let leader = Task {
            await coalescer.lead(identity("a"), cancellation: nil) {
                for await _ in gate { break }
                return .init(result: .success(answer))
            }
        }
        #expect(await joinIterator.next() == 1)
        let joiner = Task {
            await coalescer.lead(identity("a"), cancellation: nil) { .init(result: .failure(.cancelled)) }
        }
        #expect(await joinIterator.next() == 2)
        let other = await coalescer.lead(identity("b"), cancellation: nil) { .init(result: .success(answer)) }
        #expect(await joinIterator.next() == 1)
        #expect(other.led)
        open.yield()
        let joined = await joiner.value
        #expect(!joined.led)
        #expect(!joined.outcome.isCancelled, "the joiner got the leader's answer")
        #expect(await leader.value.led)
        // The leader's key, made once by the joiner; the joiner's own; the other load's own.
        #expect(made.value.sorted() == ["a", "a", "b"])
    }

    @Test(
        "a load in flight for one user is not joined by the next user's identical load, its key made after the switch",
        arguments: TransportKind.allCases)
    nonisolated func notJoinedAcrossSignIns(_ kind: TransportKind) async throws {
        let authentication = TestBox<Authentication?>(nil)
        try await UserChangeTests.withAccount(kind, switchOnFirstRequest: false, authenticationBox: authentication) {
            harness, keychain, _ in
            let (arrivals, arrived) = AsyncStream<Int>.makeStream()
            harness.engine.coalescer.joined.withLock { $0 = { _, count in arrived.yield(count) } }
            var counts = arrivals.makeAsyncIterator()
            let api = AdHocAPI(path: "/faults/gate/signed-in")
            // A's load, alone in flight: its call's key is not made yet.
            let first = Task { await harness.engine.perform(api) }
            #expect(await counts.next() == 1)
            await harness.probe.wait(for: .gateWaiting)
            keychain.set("B-token")
            authentication.value?.reset()
            // B's identical load makes A's key now: it still names A's sign-in, so B sends its own.
            let second = Task { await harness.engine.perform(api) }
            #expect(await counts.next() == 1)
            harness.probe.openGate("signed-in")
            _ = await first.value
            _ = try await second.value.get()
            #expect(harness.probe.count("/faults/gate/signed-in") == 2)
        }
    }

    /// A call whose key is known from the start, as a cached load's.
    nonisolated static func known(_ key: String) -> CallCoalescer.Identity {
        CallCoalescer.Identity(kind: ObjectIdentifier(String.self), key: key)
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
