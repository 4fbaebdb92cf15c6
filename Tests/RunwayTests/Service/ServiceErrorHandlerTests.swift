import Foundation
import Runway
import RunwayExamples
import RunwayServer
import RunwayTestSupport
import Testing

/// A service's common errors handled once for all its APIs: end the load with a typed error,
/// send it again once, or let it through.
@Suite("Service error handlers", .timeLimit(.minutes(10)))
@MainActor
struct ServiceErrorHandlerTests {
    /// Listings resting (business code 1001) end as maintenance; a 409 is sent again once; the
    /// rest goes through. Every error it is asked about is recorded.
    struct ListingErrors: ServiceErrorHandler {
        let asked = TestBox<[RunwayError]>([])
        func handle(_ error: RunwayError, context: ServiceErrorContext) async -> ServiceErrorDecision {
            asked.mutate { $0.append(error) }
            switch error {
            case .business(code: 1001, _):
                return .fail(.service(ServiceFailure(.maintenance, message: "Listings are resting.", cause: error)))
            case .httpStatus(code: 409, _):
                return .retryOnce
            default:
                return .deliver
            }
        }
    }

    func register(_ handler: ListingErrors, on harness: Harness) throws {
        var listings = listingService(baseURL: harness.server.baseURL)
        listings.errorHandler = handler
        try harness.engine.register(listings)
        var flaky = Service(id: "handled", environment: .develop, baseURLs: [.develop: harness.server.baseURL])
        flaky.errorHandler = handler
        try harness.engine.register(flaky)
    }

    @Test("a business code becomes the service's typed error, for a delegate and for an awaiting caller", arguments: TransportKind.allCases)
    func businessCodeEndsTheLoad(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let handler = ListingErrors()
            try register(handler, on: harness)
            let manager = APIManager(SecondHandListAPI(), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData(with: ["city": "atlantis"])
            await delegate.waitForEvents(1)
            guard case .service(let failure)? = delegate.events.first?.error else {
                Issue.record("\(delegate.events)")
                return
            }
            #expect(failure.kind == .maintenance && failure.message == "Listings are resting.")
            #expect(failure.cause?.contains("1001") == true)
            #expect(RunwayError.service(failure).localizedMessage() == "Listings are resting.")
            await #expect(throws: RunwayError.self) { try await manager.load(with: ["city": "atlantis"]) }
            // A success is none of its business.
            _ = try await manager.load(with: ["city": "sh"])
            #expect(handler.asked.value.count == 2)
        }
    }

    @Test("retryOnce sends the load again once, whatever the API's retry policy; a second failure goes through", arguments: TransportKind.allCases)
    func retryOnce(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let handler = ListingErrors()
            try register(handler, on: harness)
            let api = AdHocAPI(path: "/faults/flaky", service: "handled")  // retryPolicy .never
            let once = try await harness.engine.perform(api, params: ["key": "once", "failures": 1, "status": 409]).get()
            #expect(once.status == .ok)
            #expect(harness.probe.count("/faults/flaky/once") == 2)

            let twice = await harness.engine.perform(api, params: ["key": "twice", "failures": 2, "status": 409])
            guard case .failure(.httpStatus(409, _)) = twice else {
                Issue.record("\(twice)")
                return
            }
            #expect(harness.probe.count("/faults/flaky/twice") == 2)
            // Other errors go through as they are, and the API's own policy still decides them.
            let notFound = await harness.engine.perform(AdHocAPI(path: "/nothing-here", service: "handled"), params: [:])
            guard case .failure(.httpStatus(404, _)) = notFound else {
                Issue.record("\(notFound)")
                return
            }
            #expect(handler.asked.value.filter { if case .httpStatus(409, _) = $0 { true } else { false } }.count == 3)
        }
    }

    @Test("a cancelled load is never the handler's business", arguments: TransportKind.allCases)
    func cancellationIsNotHandled(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let handler = ListingErrors()
            try register(handler, on: harness)
            var api = AdHocAPI(path: "/faults/hang", service: "handled")
            let calls = CancelLoadTests.CallIDs()
            api.interceptors = [calls]
            let manager = APIManager(api, engine: harness.engine)
            // Awaited, so that the caller resumes only once the engine has finished with the load.
            let caller = Task { try await manager.load() }
            await harness.probe.wait(for: .holdStarted)
            manager.cancel(try #require(calls.ids.first))
            await #expect(throws: RunwayError.cancelled) { try await caller.value }
            #expect(handler.asked.value.isEmpty)
        }
    }
}
