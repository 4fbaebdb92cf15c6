import Foundation
import Runway
import RunwayTestSupport
import Testing

@Suite("Interceptors: hooks, order, veto", .timeLimit(.minutes(10)))
@MainActor
struct InterceptorTests {
    /// A delegate that writes its callbacks into the journal, so their place among the hooks shows.
    final class JournalDelegate: APIManagerDelegate {
        let journal: Journal
        let delivered: RecordingDelegate = RecordingDelegate()
        init(_ journal: Journal) { self.journal = journal }
        func apiManager(_ manager: any APIManaging, didSucceed response: RawResponse, load: LoadID) {
            journal.entries.append("delegate.success")
            delivered.apiManager(manager, didSucceed: response, load: load)
        }
        func apiManager(_ manager: any APIManaging, didFail error: RunwayError, load: LoadID) {
            journal.entries.append("delegate.failure")
            delivered.apiManager(manager, didFail: error, load: load)
        }
    }

    @Test("every hook runs in the documented order: the service's interceptors first, then the API's")
    func orderOnSuccess() async throws {
        try await withHarness { harness in
            let journal = Journal()
            try harness.registerServices(interceptors: [JournalInterceptor(tag: "service", journal: journal)])
            var api = AdHocAPI(path: "/echo/hooks")
            api.interceptors = [
                JournalInterceptor(tag: "api1", journal: journal), JournalInterceptor(tag: "api2", journal: journal),
            ]
            let manager = APIManager(api, engine: harness.engine)
            let delegate = JournalDelegate(journal)
            manager.delegate = delegate
            manager.loadData()
            #expect(journal.entries == ["service.shouldCall", "api1.shouldCall", "api2.shouldCall", "service.afterCall", "api1.afterCall", "api2.afterCall"])
            await delegate.delivered.waitForEvents(1)
            #expect(
                journal.entries == [
                    "service.shouldCall", "api1.shouldCall", "api2.shouldCall",
                    "service.afterCall", "api1.afterCall", "api2.afterCall",
                    "service.didReceiveResponse", "api1.didReceiveResponse", "api2.didReceiveResponse",
                    "service.beforeSuccess", "api1.beforeSuccess", "api2.beforeSuccess",
                    "delegate.success",
                    "service.afterSuccess", "api1.afterSuccess", "api2.afterSuccess",
                ])
        }
    }

    @Test("failure hooks wrap the failure delivery")
    func orderOnFailure() async throws {
        try await withHarness { harness in
            let journal = Journal()
            var api = AdHocAPI(path: "/faults/status/500")
            api.interceptors = [JournalInterceptor(tag: "api", journal: journal)]
            let manager = APIManager(api, engine: harness.engine)
            let delegate = JournalDelegate(journal)
            manager.delegate = delegate
            manager.loadData()
            await delegate.delivered.waitForEvents(1)
            #expect(
                journal.entries == [
                    "api.shouldCall", "api.afterCall", "api.didReceiveResponse", "api.beforeFailure",
                    "delegate.failure", "api.afterFailure",
                ])
            guard case .httpStatus(500, _)? = delegate.delivered.events.first?.error else {
                Issue.record("expected HTTP 500, got \(String(describing: delegate.delivered.events.first?.error))")
                return
            }
        }
    }

    @Test("a veto stops the call before it leaves the device and is delivered as vetoed")
    func veto() async throws {
        try await withHarness { harness in
            let journal = Journal()
            var api = AdHocAPI(path: "/echo/veto")
            api.interceptors = [
                JournalInterceptor(tag: "first", journal: journal, veto: "not logged in"),
                JournalInterceptor(tag: "second", journal: journal),
            ]
            let manager = APIManager(api, engine: harness.engine)
            await #expect(throws: RunwayError.vetoed(reason: "not logged in")) { try await manager.load() }
            #expect(journal.entries == ["first.shouldCall", "first.beforeFailure", "second.beforeFailure", "first.afterFailure", "second.afterFailure"])
            #expect(harness.probe.count("/echo") == 0)
        }
    }
}
