import Foundation
import Runway
import RunwayTestSupport
import Testing

@Suite("The landing point vanishes", .timeLimit(.minutes(10)))
@MainActor
struct LandingPointTests {
    @Test("releasing a manager mid-flight closes its connection, frees it, and delivers nothing", arguments: TransportKind.allCases)
    func releaseMidFlight(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let delegate = RecordingDelegate()
            var manager: APIManager<AdHocAPI>? = APIManager(AdHocAPI(path: "/faults/hang"), engine: harness.engine)
            weak let released = manager
            manager?.delegate = delegate
            manager?.loadData()
            await harness.probe.wait(for: .holdStarted)
            manager = nil
            #expect(released == nil, "an in-flight load must not keep its manager alive")
            // The server sees the client close the held connection: the request was cancelled on the wire.
            await harness.probe.wait(for: .holdClosed)
            // The engine's log line for that load says it ended cancelled.
            let line = await harness.log.waitForLine { $0.metadata["runway.api"] == "AdHocAPI" }
            #expect(line.metadata["runway.outcome"] == "cancelled")
            #expect(delegate.events.isEmpty)
        }
    }
}
