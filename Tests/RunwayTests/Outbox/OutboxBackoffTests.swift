import Foundation
@testable import Runway
import RunwayNIO
import RunwayStorage
import RunwayTestSupport
import Testing

/// An item's back-off is kept with it: a relaunch in the same boot waits it out too, instead of
/// sending at once what a server asked to be left alone.
@Suite("Outbox back-off", .timeLimit(.minutes(10)))
struct OutboxBackoffTests {
    @Test("A failed try's wait is stored with the item and read back by the next launch")
    func backoffSurvivesRelaunch() async throws {
        try await OutboxTests.withSetting { setting in
            var policy = OutboxTests.quick
            policy.baseBackoff = .seconds(3_600)
            policy.maximumBackoff = .seconds(7_200)
            let item = try await setting.withOutbox(.asyncHTTPClient, serving: false, policy: policy) { outbox in
                let updates = outbox.updates()
                let item = try await outbox.enqueue(PlaceOrder(), params: OutboxTests.order("main", 0))
                // Nobody listens: the try fails and the item waits at least half the base back-off.
                _ = await OutboxTests.read(updates) { seen in
                    seen.contains { if case .sending = $0.state { true } else { false } }
                        && seen.last.map { if case .pending = $0.state { true } else { false } } == true
                }
                return item
            }
            let store = try OutboxStore(container: setting.container, name: policy.databaseName, logger: .init(label: "test"))
            let head = try #require(try await store.heads(signIn: 0, excluding: []).ready.first)
            #expect(head.item.id == item.id && head.attempts == 1)
            let wait = try #require(head.notBefore) - BootClock.nowMilliseconds()
            #expect(wait > 1_700_000 && wait <= 3_600_000, "about half an hour to an hour left: \(wait) ms")
        }
    }
}
