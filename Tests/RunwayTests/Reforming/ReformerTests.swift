import Foundation
import Runway
import RunwayExamples
import RunwayTestSupport
import Testing

@Suite("Reformers: raw data stays in the manager, each view gets its own shape", .timeLimit(.minutes(10)))
@MainActor
struct ReformerTests {
    @Test("one reformer normalises three APIs with different keys into one row type")
    func oneReformerManyAPIs() async throws {
        try await withHarness { harness in
            let secondHand = APIManager(SecondHandListAPI(), engine: harness.engine)
            let rental = APIManager(RentalListAPI(), engine: harness.engine)
            let newHome = APIManager(NewHomeListAPI(), engine: harness.engine)
            try await secondHand.load(with: ["page_size": 3])
            try await rental.load(with: ["page_size": 3])
            try await newHome.load(with: ["page_size": 3])
            let reformer = ListingRowsReformer()
            let managers: [any APIManaging] = [secondHand, rental, newHome]
            var rows: [ListingRow] = []
            for manager in managers { rows += try await manager.reformLastResponse(with: reformer) }
            #expect(rows.count == 9)
            #expect(rows.map(\.kind) == ["esf", "esf", "esf", "zf", "zf", "zf", "xf", "xf", "xf"])
            #expect(rows.allSatisfy { !$0.name.isEmpty && !$0.title.isEmpty && $0.price > 0 })
            #expect(rows[3].id == 1001 && rows[6].id == 2001)
        }
    }

    @Test("one API feeds two views through two reformers, and the raw JSON is there without one")
    func oneAPIManyReformers() async throws {
        try await withHarness { harness in
            let manager = APIManager(RentalListAPI(), engine: harness.engine)
            try await manager.load(with: ["page_size": 4])
            let rows = try await manager.reformLastResponse(with: ListingRowsReformer())
            let pins = try await manager.reformLastResponse(with: MapPinReformer())
            #expect(rows.map(\.name) == pins.map(\.label))
            #expect(pins.allSatisfy { $0.latitude > 31 && $0.longitude > 121 })
            #expect(manager.rawResponse?.json?["data"]?["items"]?.arrayValue?.count == 4)
        }
    }

    @Test("a reformer-local Decodable decodes straight from the bytes of a raw-format API")
    func decodingReformer() async throws {
        struct Page: Decodable, Sendable {
            struct Item: Decodable, Sendable { let esf_id: Int; let esf_price: Int }
            struct Payload: Decodable, Sendable { let items: [Item] }
            let data: Payload
        }
        try await withHarness { harness in
            var api = AdHocAPI(path: "/listings/esf")
            api.responseFormat = .raw
            let manager = APIManager(api, engine: harness.engine)
            let page = try await manager.load(with: ["page_size": 5], reformedBy: DecodingReformer(Page.self))
            #expect(page.data.items.map(\.esf_id) == [1, 2, 3, 4, 5])
            #expect(manager.rawResponse?.json == nil, "a raw-format body is not parsed into a tree")
        }
    }

    @Test("a reformer that fails reports an invalid response; fetching before any load reports no content")
    func reformerFailure() async throws {
        try await withHarness { harness in
            let manager = APIManager(AdHocAPI(path: "/echo/r"), engine: harness.engine)
            await #expect(throws: RunwayError.noContent) { try await manager.reformLastResponse(with: MapPinReformer()) }
            try await manager.load()
            await #expect {
                try await manager.reformLastResponse(with: ListingRowsReformer())
            } throws: { error in
                guard case .invalidResponse(let reason) = error as? RunwayError else { return false }
                return reason.contains("ListingRowsReformer")
            }
        }
    }

    /// What happened, in order: the reformer's run and the load's landing.
    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        func add(_ event: String) {
            lock.lock()
            stored.append(event)
            lock.unlock()
        }
    }

    /// Notes when a load lands on the main actor.
    struct LandingWatch: Interceptor {
        let events: Events
        func didReceiveResponse(_ call: CallInfo, result: Result<RawResponse, RunwayError>) { events.add("landed") }
    }

    /// Notes where and when it runs.
    struct NotingReformer: Reformer {
        let events: Events
        func reform(_ response: RawResponse) throws -> Int {
            events.add(MainQueue.isCurrent ? "reformed on the main actor" : "reformed")
            return response.status.code
        }
    }

    @Test("load(reformedBy:) reforms off the main actor before the load comes back to land: the main actor only hands back the value")
    func reformBeforeLanding() async throws {
        try await withHarness { harness in
            let events = Events()
            var api = AdHocAPI(path: "/echo/reformed")
            api.interceptors = [LandingWatch(events: events)]
            let manager = APIManager(api, engine: harness.engine)
            let status = try await manager.load(reformedBy: NotingReformer(events: events))
            #expect(status == 200)
            #expect(events.all == ["reformed", "landed"], "one hop back to the main actor, with the value made")
            #expect(manager.rawResponse?.status == .ok, "the load landed as any other")
        }
    }
}
