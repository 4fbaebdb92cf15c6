import Foundation
import Logging
@testable import Runway
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// What the log does with each kind of answer from a real collector: only transient failures
/// are tried again, a batch the collector finds too large is split, events it refuses are
/// dropped and counted, and no batch is tried forever — so one bad event never holds back the
/// queue behind it.
@Suite("Operation log answers", .timeLimit(.minutes(10)))
struct OperationLogAnswerTests {
    @Test("A collector's 413 splits the batch until it fits; every event is stored once")
    func tooManyEventsSplitsTheBatch() async throws {
        var limits = OperationLogCollector.Limits()
        limits.maximumEvents = 7
        try await withCollector(limits: limits) { fixture in
            let reports = TestBox<[OperationLog.UploadReport]>([])
            let log = try OperationLog(
                engine: fixture.engine, service: "oplog", container: fixture.container,
                policy: CollectorFixture.policy, onUpload: { report in reports.mutate { $0.append(report) } })
            var recorded: Set<String> = []
            for index in 0..<30 { recorded.insert(try log.record("tap", payload: ["n": .int(index)])) }
            try await log.flush()
            let status = try await log.status()
            await log.close()
            #expect(status.uploaded == 30 && status.refused == 0 && status.pending == 0 && status.inFlight == 0)
            #expect(Set(try await fixture.store.allEventIDs()) == recorded)
            let sent = reports.value
            #expect(sent.contains { if case .httpStatus(413, _)? = $0.failure { true } else { false } })
            #expect(sent.filter { $0.failure == nil }.allSatisfy { $0.eventCount <= 7 })
        }
    }

    @Test("A batch past the collector's value limit is split like one past its event limit; every event is stored once")
    func tooManyValuesSplitsTheBatch() async throws {
        var limits = OperationLogCollector.Limits()
        limits.maximumValues = 200
        try await withCollector(limits: limits) { fixture in
            let reports = TestBox<[OperationLog.UploadReport]>([])
            let log = try OperationLog(
                engine: fixture.engine, service: "oplog", container: fixture.container,
                policy: CollectorFixture.policy, onUpload: { report in reports.mutate { $0.append(report) } })
            // 26 values an event (the event, id, name, time, payload and its 21): 30 take 780.
            let payload: JSON = .array((0..<20).map { .int($0) })
            var recorded: Set<String> = []
            for _ in 0..<30 { recorded.insert(try log.record("tap", payload: payload)) }
            try await log.flush()
            let status = try await log.status()
            await log.close()
            let sent = reports.value
            #expect(status.uploaded == 30 && status.refused == 0 && status.pending == 0)
            #expect(Set(try await fixture.store.allEventIDs()) == recorded)
            #expect(sent.contains { if case .httpStatus(413, _)? = $0.failure { true } else { false } })
            #expect(sent.filter { $0.failure == nil }.allSatisfy { $0.eventCount * 26 <= 200 })
        }
    }

    @Test("An event too large for the collector on its own is refused and counted; the rest are stored")
    func singleEventTooLargeIsRefused() async throws {
        var limits = OperationLogCollector.Limits()
        limits.maximumInflatedSize = 4096
        try await withCollector(limits: limits) { fixture in
            let (log, _) = try fixture.openLog()
            var small: Set<String> = []
            for index in 0..<20 {
                if index == 7 { try log.record("big", payload: ["text": .string(String(repeating: "x", count: 5000))]) }
                small.insert(try log.record("tap", payload: ["n": .int(index)]))
            }
            try await log.flush()
            let status = try await log.status()
            await log.close()
            #expect(status.uploaded == 20 && status.refused == 1 && status.pending == 0 && status.inFlight == 0)
            #expect(Set(try await fixture.store.allEventIDs()) == small)
            #expect(fixture.log.lines.contains { $0.message.contains("refuses an event as too large") })
        }
    }

    @Test("Events the collector refuses by index are dropped, counted and named; the events behind them are uploaded")
    func refusedEventsAreDroppedByIndex() async throws {
        var limits = OperationLogCollector.Limits()
        limits.maximumPayloadSize = 64
        try await withCollector(limits: limits) { fixture in
            let (log, _) = try fixture.openLog()
            var small: Set<String> = []
            for index in 0..<40 {
                if index == 3 || index == 33 {
                    try log.record("too.wide", payload: ["text": .string(String(repeating: "x", count: 200))])
                }
                small.insert(try log.record("tap", payload: ["n": .int(index)]))
            }
            // Before, the collector refused the whole batch with 400 and the log sent it again forever.
            try await log.flush()
            let status = try await log.status()
            await log.close()
            #expect(status.uploaded == 40 && status.refused == 2 && status.pending == 0 && status.inFlight == 0)
            #expect(Set(try await fixture.store.allEventIDs()) == small)
            let warning = fixture.log.lines.first { $0.message.contains("collector refused events") }
            #expect(warning?.metadata["events"]?.contains("too.wide#") == true)
            #expect(warning?.metadata["events"]?.contains("payload: too_large") == true)
        }
    }

    @Test("A batch the collector calls malformed (400) is dropped and counted at once, never sent again")
    func malformedBatchIsDropped() async throws {
        let received = TestBox(0)
        try await withCollector(fault: { batch in
            received.set(batch)
            return batch == 1 ? .badRequest : nil
        }) { fixture in
            let (log, _) = try fixture.openLog()
            for _ in 0..<30 { try log.record("tap") }
            try await log.flush()
            for _ in 0..<5 { try log.record("later") }
            try await log.flush()
            let status = try await log.status()
            await log.close()
            #expect(status.refused == 30 && status.uploaded == 5 && status.pending == 0 && status.inFlight == 0)
            #expect(received.value == 2, "the refused batch was sent once")
            #expect(try await fixture.store.summary().byName.map(\.name) == ["later"])
        }
    }

    @Test("A batch that fails every time is dropped after maximumAttempts, counted, and the queue moves on")
    func batchIsNotRetriedForever() async throws {
        let received = TestBox(0)
        try await withCollector(fault: { batch in
            received.set(batch)
            return batch <= 3 ? .serverError : nil
        }) { fixture in
            var policy = CollectorFixture.policy
            policy.maximumAttempts = 3
            policy.retryPolicy = .never
            let (log, reports) = try fixture.openLog(policy)
            for _ in 0..<5 { try log.record("doomed") }
            await #expect(throws: OperationLogError.self) { try await log.flush() }
            // The third failure drops the batch before it is reported.
            _ = await reports.first(3)
            let status = try await log.status()
            #expect(status.abandoned == 5 && status.pending == 0 && status.inFlight == 0 && status.uploaded == 0)
            for _ in 0..<2 { try log.record("after") }
            try await log.flush()
            await log.close()
            #expect(received.value == 4)
            #expect(try await fixture.store.summary().byName.map(\.name) == ["after"])
            #expect(fixture.log.lines.contains { $0.message.contains("failed too often") })
        }
    }

    @Test("Answers listing refused events out of range or twice are read safely")
    func hostileRefusalListIsBounded() {
        let body = Data(
            #"{"refused":[{"index":1,"field":"name","reason":"holds_nul"},{"index":1},{"index":-1},{"index":99},{"index":"2"},{"field":"x"},{"index":0}]}"#
                .utf8)
        let refused = OperationLog.refusedEvents(in: body, count: 3)
        #expect(refused.map(\.index) == [1, 0])
        #expect(refused.first?.reason == "holds_nul")
        #expect(OperationLog.refusedEvents(in: Data("not json".utf8), count: 3).isEmpty)
        #expect(OperationLog.refusedEvents(in: Data(#"{"refused":{"index":0}}"#.utf8), count: 3).isEmpty)
    }
}
