import Foundation
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// An `async` load nobody can join runs in its caller's task. The manager still ends it on its
/// own — superseded, all requests cancelled, at any step — without cancelling that task.
@Suite("Async loads that run in their caller's task", .timeLimit(.minutes(10)))
@MainActor
struct CallersTaskLoadTests {
    /// Awaits a manager's load in a task of its own, reporting its outcome and whether the task
    /// itself was cancelled afterwards.
    func caller(
        _ load: @escaping @MainActor () async throws -> RawResponse
    ) -> Task<(Result<RawResponse, RunwayError>, taskCancelled: Bool), Never> {
        Task { @MainActor in
            let result: Result<RawResponse, RunwayError>
            do {
                result = .success(try await load())
            } catch let error as RunwayError {
                result = .failure(error)
            } catch {
                result = .failure(.transport(description: "not a RunwayError: \(error)"))
            }
            return (result, Task.isCancelled)
        }
    }

    /// Starts an async load of `manager`, ends it with `cancel` once the server holds it, and
    /// checks that it ended as cancelled, on the wire, with its caller's task not cancelled.
    func expectEndedOnTheWire(
        _ manager: APIManager<AdHocAPI>, _ harness: Harness, by cancel: () async throws -> Void
    ) async throws {
        let first = caller { try await manager.load() }
        await harness.probe.wait(for: .holdStarted)
        try await cancel()
        let (result, taskCancelled) = await first.value
        #expect(result.error == .cancelled)
        #expect(!taskCancelled, "the manager cancels the load, not the task that awaited it")
        await harness.probe.wait(for: .holdClosed)
    }

    /// An engine over an app's own `transport`, serving the test service.
    func engine(over transport: some Transport, _ harness: Harness) throws -> Engine {
        let engine = Engine(transport: transport)
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL]))
        return engine
    }

    @Test("cancel-in-flight: a newer load cancels the async one on the wire, not its caller's task", arguments: TransportKind.allCases)
    func supersededOnTheWire(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let manager = hangingManager(harness.engine) { $0.requestStrategy = .cancelInFlight }
            try await expectEndedOnTheWire(manager, harness) {
                manager.api.path = "/echo/newer"
                let newer = try await manager.load(with: ["n": 2])
                #expect(newer.json?["query"] == "n=2")
            }
            #expect(!manager.isLoading)
        }
    }

    @Test("cancelAllRequests ends an async load on the wire and delivers it as cancelled once", arguments: TransportKind.allCases)
    func cancelAll(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let recorder = OutcomeRecorder()
            let manager = hangingManager(harness.engine) { $0.interceptors = [recorder] }
            try await expectEndedOnTheWire(manager, harness) { manager.cancelAllRequests() }
            #expect(recorder.failures.value == [.cancelled], "delivered once, as cancelled")
            #expect(manager.lastError == .cancelled)
        }
    }

    @Test("a retry's back-off ends when the manager cancels the load")
    func cancelledDuringBackOff() async throws {
        let (backingOff, signal) = AsyncStream<Void>.makeStream()
        let sleep: @Sendable (Duration) async throws -> Void = { _ in
            signal.yield()
            try await Task.sleep(for: .seconds(3600))
        }
        try await withHarness(sleep: sleep) { harness in
            var api = AdHocAPI(path: "/faults/flaky")
            api.retryPolicy = .default
            let manager = APIManager(api, engine: harness.engine)
            let first = caller { try await manager.load(with: ["key": "back-off", "failures": 9]) }
            var iterator = backingOff.makeAsyncIterator()
            _ = await iterator.next()
            manager.cancelAllRequests()
            let (result, taskCancelled) = await first.value
            #expect(result.error == .cancelled)
            #expect(!taskCancelled)
            #expect(harness.probe.count("/faults/flaky/back-off") == 1, "no attempt after the cancellation")
        }
    }

    @Test("over an app's transport that knows only task cancellation, the load is still cancelled on the wire")
    func transportOfTheApp() async throws {
        try await withHarness() { harness in
            let transport = TaskCancellationOnly(inner: harness.engine.transport)
            let manager = hangingManager(try engine(over: transport, harness)) { $0.requestStrategy = .cancelInFlight }
            try await expectEndedOnTheWire(manager, harness) {
                manager.api.path = "/echo/newer"
                _ = try await manager.load()
            }
        }
    }

    @Test("an app's transport that honours the handle gets it and ends the exchange itself")
    func transportHonouringTheHandle() async throws {
        try await withHarness() { harness in
            let transport = HandleHonouring(inner: harness.engine.transport)
            let manager = hangingManager(try engine(over: transport, harness))
            try await expectEndedOnTheWire(manager, harness) { manager.cancelAllRequests() }
            #expect(transport.handedHandle.value)
        }
    }

    @Test("a strategy changed to ignore-new mid-flight: a delegate load starts its own instead of joining")
    func strategyChangedMidFlight() async throws {
        try await withHarness { harness in
            // The manager's joining is the subject: the engine does not share the two requests.
            var api = AdHocAPI(path: "/faults/gate/changed")
            api.sharesIdenticalLoads = false
            let manager = APIManager(api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            let first = caller { try await manager.load() }
            await harness.probe.wait(for: .gateWaiting)
            manager.api.requestStrategy = .ignoreNewWhileLoading
            #expect(manager.loadData() != nil, "an async load running in its caller's task cannot be joined")
            #expect(manager.loadData() == nil, "the delegate's load can")
            await harness.probe.wait(for: .gateWaiting, count: 2)
            // The caller leaving ends its own load only.
            first.cancel()
            let (result, _) = await first.value
            #expect(result.error == .cancelled)
            harness.probe.openGate("changed")
            await delegate.waitForEvents(1)
            #expect(delegate.events.count == 1)
            #expect(delegate.events[0].isSuccess)
            #expect(harness.probe.count("/faults/gate/changed") == 2)
        }
    }

    @Test("an async load cancelled after its answer arrived but before its caller landed it is cancelled, once")
    func cancelledBeforeTheCallerLands() async throws {
        try await withHarness { harness in
            let recorder = OutcomeRecorder()
            var api = AdHocAPI(path: "/faults/gate/caller-landing")
            api.interceptors = [recorder]
            let manager = APIManager(api, engine: harness.engine)
            let first = caller { try await manager.load() }
            await harness.probe.wait(for: .gateWaiting)

            // The cancellation runs on the main actor before the caller comes back to it.
            #expect(harness.openGateHoldingMainActor("caller-landing") { manager.cancelAllRequests() })

            let (result, taskCancelled) = await first.value
            #expect(result.error == .cancelled)
            #expect(!taskCancelled)
            #expect(manager.rawResponse == nil, "a cancelled load's answer is dropped")
            #expect(recorder.failures.value == [.cancelled])
            #expect(recorder.successes.value == 0)
            #expect(harness.log.lines.last?.metadata["runway.outcome"] == "success", "the answer did arrive")
        }
    }
}

/// An app's own transport: it stops an exchange only when its task is cancelled (it does not
/// say `honoursCancellation`, and ignores the handle it is given).
struct TaskCancellationOnly: Transport {
    let inner: any Transport

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var plain = request
        plain.cancellation = nil
        return try await inner.send(plain)
    }
}

/// An app's own transport that honours a load's cancellation handle itself.
struct HandleHonouring: Transport {
    let inner: any Transport
    let handedHandle = TestBox(false)

    var honoursCancellation: Bool { true }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.cancellation != nil { handedHandle.mutate { $0 = true } }
        let inner = self.inner
        var plain = request
        plain.cancellation = nil
        let exchange = Task { try await inner.send(plain) }
        let registration = request.cancellation?.register { exchange.cancel() }
        defer { if let registration { request.cancellation?.end(registration) } }
        return try await withTaskCancellationHandler {
            try await exchange.value
        } onCancel: {
            exchange.cancel()
        }
    }
}

/// Records the outcomes interceptors are told of.
/// A manager of a hanging route whose exchange only a cancellation can end within the test's
/// time limit.
@MainActor
func hangingManager(_ engine: Engine, configure: (inout AdHocAPI) -> Void = { _ in }) -> APIManager<AdHocAPI> {
    var api = AdHocAPI(path: "/faults/hang")
    api.timeout = .seconds(600)
    configure(&api)
    return APIManager(api, engine: engine)
}

final class OutcomeRecorder: Interceptor {
    let failures = TestBox<[RunwayError]>([])
    let successes = TestBox(0)

    func afterPerformFailure(_ call: CallInfo, error: RunwayError) {
        failures.mutate { $0.append(error) }
    }

    func afterPerformSuccess(_ call: CallInfo, response: RawResponse) {
        successes.mutate { $0 += 1 }
    }
}

extension Result where Failure == RunwayError {
    /// The failure, `nil` for a success.
    var error: RunwayError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
