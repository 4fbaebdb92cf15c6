import Foundation
import GRDB
@testable import Runway
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The log's sense of time: ages and back-offs on a clock the user cannot set, a back-off that
/// survives a relaunch, and the device's clock sent with each batch so the collector can correct
/// a wrong one.
@Suite("Operation log clocks", .timeLimit(.minutes(10)))
struct OperationLogClockTests {
    @Test("The wall clock set back a day delays nothing; the collector stores the device's offset")
    func wallClockSetBackDelaysNothing() async throws {
        try await withCollector { fixture in
            let wall = TestBox(Date())
            var policy = CollectorFixture.policy
            policy.maximumAge = .milliseconds(100)
            let (log, reports) = try fixture.openLog(policy, wallClock: { wall.value })
            let id = try log.record("tap")
            // The user sets the clock back a day before the event's batch is due.
            wall.mutate { $0 -= 86_400 }
            // No flush: the event goes when its age (on the boot clock) reaches 100 ms.
            let report = try #require(await reports.first(1).first)
            await log.close()
            #expect(report.failure == nil && report.eventCount == 1)
            let offset = try #require(try await fixture.store.clockOffsets()[id] ?? nil)
            #expect(abs(offset - 86_400_000) < 60_000, "the device is a day behind: \(offset) ms")
        }
    }

    @Test("A Retry-After survives a relaunch in the same boot: the next launch waits too")
    func retryAfterSurvivesRelaunch() async throws {
        let received = TestBox(0)
        try await withCollector(fault: { batch in
            received.set(batch)
            return batch == 1 ? .tooManyRequests(retryAfter: 3600) : nil
        }) { fixture in
            let (first, _) = try fixture.openLog()
            for _ in 0..<3 { try first.record("tap") }
            await #expect(throws: OperationLogError.self) { try await first.flush() }
            await first.close()

            // Before, the next launch sent the leftovers at once, an hour early.
            let (second, _) = try fixture.openLog()
            await #expect {
                try await second.flush(within: .milliseconds(300))
            } throws: { error in
                guard case .uploadFailed(.timeout)? = error as? OperationLogError else { return false }
                return true
            }
            let status = try await second.status()
            await second.close()
            #expect(status.inFlight == 3 && status.uploaded == 0)
            #expect(received.value == 1)
        }
    }

    @Test("A wait stored in another boot means nothing: the next launch sends at once")
    func waitFromAnotherBootIsDropped() async throws {
        try await withCollector(fault: { batch in batch == 1 ? .tooManyRequests(retryAfter: 3600) : nil }) { fixture in
            let (first, _) = try fixture.openLog()
            for _ in 0..<3 { try first.record("tap") }
            await #expect(throws: OperationLogError.self) { try await first.flush() }
            await first.close()
            // As if the device rebooted: the stored boot is another one.
            try await fixture.alterQueueFile("UPDATE meta SET value = 'an-earlier-boot' WHERE key = 'boot'")

            let (second, _) = try fixture.openLog()
            try await second.flush(within: .seconds(60))
            let status = try await second.status()
            await second.close()
            #expect(status.uploaded == 3 && status.inFlight == 0)
        }
    }

    @Test("A backlog drains in batches of backlogBatchSize, within maximumBatchBytes")
    func backlogDrainsInLargerBatches() async throws {
        try await withCollector { fixture in
            try await fixture.queueWithoutSending(1_000) { ["n": .int($0)] }

            // The next launch sends them as leftovers: 2 uploads of 500 rather than 34 of 30.
            let (second, reports) = try fixture.openLog()
            try await second.flush(within: .seconds(60))
            await second.close()
            let sent = await reports.first(2)
            #expect(sent.map(\.eventCount) == [500, 500])
            #expect(try await fixture.store.summary().events == 1_000)
        }
    }

    @Test("Batches of a backlog stop at maximumBatchBytes")
    func backlogBatchesRespectTheByteBudget() async throws {
        try await withCollector { fixture in
            try await fixture.queueWithoutSending(100) { _ in ["text": .string(String(repeating: "x", count: 990))] }

            var budget = CollectorFixture.policy
            budget.maximumBatchBytes = 20_000
            let (second, reports) = try fixture.openLog(budget)
            try await second.flush(within: .seconds(60))
            let status = try await second.status()
            await second.close()
            #expect(status.uploaded == 100)
            // Each event is 3 + 1,001 bytes of name and payload: 19 fit in 20,000.
            let sent = await reports.first(6)
            #expect(sent.map(\.eventCount) == [19, 19, 19, 19, 19, 5])
        }
    }
}
