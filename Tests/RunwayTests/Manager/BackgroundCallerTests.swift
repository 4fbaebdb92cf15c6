import Dispatch
import Foundation
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// A caller off the main actor whose load needs nothing of it (no interceptors, params given,
/// a strategy nobody joins) is admitted, sent and landed without visiting the main actor — and
/// the manager still ends it, records it and serves the main actor's readers.
@Suite("Async loads from a background task", .timeLimit(.minutes(10)))
@MainActor
struct BackgroundCallerTests {
    /// Runs `load` in a detached task, off the main actor, and blocks the main thread until it
    /// has finished: a load that needed the main actor could not finish. The bound is not what
    /// the test measures: it only ends a failing run (a deadlock) instead of hanging the suite,
    /// and is far beyond one loopback request on a loaded machine; a passing run returns as soon
    /// as the load lands.
    func loadWhileTheMainActorIsBusy(
        _ load: @escaping @Sendable () async throws(RunwayError) -> RawResponse
    ) -> Result<RawResponse, RunwayError>? {
        let finished = DispatchSemaphore(value: 0)
        let outcome = TestBox<Result<RawResponse, RunwayError>?>(nil)
        Task.detached {
            let result: Result<RawResponse, RunwayError>
            do throws(RunwayError) { result = .success(try await load()) } catch { result = .failure(error) }
            outcome.mutate { $0 = result }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + .seconds(120)) == .success else { return nil }
        return outcome.value
    }

    /// Awaits `manager`'s load in a detached task, off the main actor, reporting its outcome.
    func backgroundCaller(_ manager: APIManager<AdHocAPI>) -> Task<Result<RawResponse, RunwayError>, Never> {
        Task.detached {
            do throws(RunwayError) { return .success(try await manager.load()) } catch { return .failure(error) }
        }
    }

    @Test("a load from a background task lands while the main actor is busy, and the manager records it", arguments: TransportKind.allCases)
    func landsWithoutTheMainActor(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            // The validator runs where the load is admitted: it sees which thread that is.
            let admittedOnMainThread = TestBox<Bool?>(nil)
            var api = AdHocAPI(path: "/echo/background")
            api.paramsValidator = ParamsValidation { _ throws(ValidationFailure) in
                admittedOnMainThread.mutate { $0 = Thread.isMainThread }
            }
            let manager = APIManager(api, engine: harness.engine)
            let outcome = loadWhileTheMainActorIsBusy { () throws(RunwayError) in try await manager.load(with: ["n": 1]) }
            #expect(admittedOnMainThread.value == false, "admitted where its caller runs, off the main thread")
            let response = try #require(outcome, "the load waited for the main actor").get()
            #expect(response.json?["query"] == "n=1")
            #expect(manager.rawResponse?.json?["query"] == "n=1", "landed: the main actor reads the response")
            #expect(manager.lastError == nil)
            #expect(!manager.isLoading)
        }
    }

    @Test("params the validator refuses are recorded as the last error and never sent, from a background task")
    func refusedWithoutTheMainActor() async throws {
        try await withHarness { harness in
            var api = AdHocAPI(path: "/echo/background")
            api.paramsValidator = .required("city")
            let manager = APIManager(api, engine: harness.engine)
            let outcome = loadWhileTheMainActorIsBusy { () throws(RunwayError) in try await manager.load(with: [:]) }
            let refused = try #require(outcome, "the load waited for the main actor")
            #expect(refused.error == .paramsInvalid(reason: "\"city\" is required"))
            #expect(manager.lastError == .paramsInvalid(reason: "\"city\" is required"))
            #expect(harness.probe.count("/echo") == 0)
        }
    }

    @Test("a background load with interceptors still runs their hooks, on the main actor")
    func interceptorsStillOnTheMainActor() async throws {
        try await withHarness { harness in
            let recorder = OutcomeRecorder()
            var api = AdHocAPI(path: "/echo/background")
            api.interceptors = [recorder]
            let manager = APIManager(api, engine: harness.engine)
            let response = try await Task.detached { try await manager.load(with: ["n": 2]) }.value
            #expect(response.json?["query"] == "n=2")
            #expect(recorder.successes.value == 1)
            #expect(manager.rawResponse?.json?["query"] == "n=2")
        }
    }

    @Test("a background load without params asks the param source, on the main actor")
    func paramSourceAsked() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/echo/background"), engine: harness.engine)
            let source = CountingParamSource()
            manager.paramSource = source
            let response = try await Task.detached { try await manager.load() }.value
            #expect(response.json?["query"] == "q=from-source")
            #expect(source.asked == 1)
            let explicit = try await Task.detached { try await manager.load(with: ["q": "given"]) }.value
            #expect(explicit.json?["query"] == "q=given")
            #expect(source.asked == 1, "params given: the source is not asked")
        }
    }

    @Test("cancel-in-flight: a newer background load ends the older one on the wire, and it is delivered as cancelled")
    func supersededFromTheBackground() async throws {
        try await withHarness { harness in
            let manager = hangingManager(harness.engine) { $0.requestStrategy = .cancelInFlight }
            let older = backgroundCaller(manager)
            await harness.probe.wait(for: .holdStarted)
            manager.api.path = "/echo/newer"
            let newer = try await Task.detached { try await manager.load(with: ["n": 2]) }.value
            #expect(newer.json?["query"] == "n=2")
            #expect(await older.value.error == .cancelled)
            await harness.probe.wait(for: .holdClosed)
            #expect(!manager.isLoading)
        }
    }

    /// What ends a background caller's load in flight.
    enum Ending: String, CaseIterable, Sendable {
        /// `cancelAllRequests()` on the main actor.
        case managerCancelsAll
        /// The caller's own task is cancelled.
        case callerCancelled
    }

    @Test(
        "a background caller's load ended by the manager or by its task ends on the wire, recorded as cancelled",
        arguments: TransportKind.allCases, Ending.allCases)
    func endedOnTheWire(_ transport: TransportKind, _ ending: Ending) async throws {
        try await withHarness(transport) { harness in
            let manager = hangingManager(harness.engine)
            let caller = backgroundCaller(manager)
            await harness.probe.wait(for: .holdStarted)
            #expect(manager.isLoading, "admitted in the book the main actor reads")
            switch ending {
            case .managerCancelsAll: manager.cancelAllRequests()
            case .callerCancelled: caller.cancel()
            }
            #expect(await caller.value.error == .cancelled)
            await harness.probe.wait(for: .holdClosed)
            #expect(manager.lastError == .cancelled)
            #expect(!manager.isLoading)
        }
    }
}
