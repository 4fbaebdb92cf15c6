import RunwayTestSupport
import Testing
@testable import Runway

/// The operation log's upload rules as a plain value: queue state and time in, the next step
/// out, with no collector and no clock.
@Suite("UploadSchedule", .timeLimit(.minutes(10)))
struct UploadScheduleTests {
    /// Batches of 30, a minute's age limit, backlogs in batches of up to 500, two at once.
    let schedule = UploadSchedule(OperationLog.Policy())

    func situation(
        pending: Int, oldest: Int64? = 0, claimed: Set<String> = [], lowest: Int64? = 1, now: Int64 = 1_000,
        notBefore: Int64? = nil, reachable: Bool = true, expensive: Bool = false, sendThrough: Int64 = 0,
        inFlight: Set<String> = [], sizeLimit: Int = 500
    ) -> UploadSchedule.Situation {
        UploadSchedule.Situation(
            queued: OperationLogQueue.State(
                pending: pending, oldestQueued: pending > 0 ? oldest : nil, claimedBatches: claimed, lowestSequence: lowest,
                highestSequence: Int64(pending), lowestQueuedAt: pending > 0 ? oldest : nil),
            now: now, notBefore: notBefore, reachable: reachable, expensive: expensive, sendThrough: sendThrough,
            inFlight: inFlight, sizeLimit: sizeLimit)
    }

    @Test("a part batch waits for its oldest event to reach the age limit; a whole batch goes at once")
    func batchesAndAges() {
        #expect(schedule.next(situation(pending: 0, lowest: nil)) == .wait(until: nil))
        #expect(schedule.next(situation(pending: 5, oldest: 0, now: 1_000)) == .wait(until: 60_000))
        #expect(schedule.next(situation(pending: 5, oldest: 0, now: 60_000)) == .claim(limit: 30))
        #expect(schedule.next(situation(pending: 30)) == .claim(limit: 30))
        #expect(schedule.next(situation(pending: 45)) == .claim(limit: 30))
    }

    @Test("a flush or a leftover sends what is queued without waiting for a full batch")
    func forced() {
        #expect(schedule.next(situation(pending: 3, lowest: 7, sendThrough: 7)) == .claim(limit: 30))
        #expect(schedule.next(situation(pending: 3, lowest: 8, sendThrough: 7)) == .wait(until: 60_000))
    }

    @Test("a backlog goes in whole batches of up to 500, two at once; by age or flush, all of it")
    func backlog() {
        #expect(schedule.next(situation(pending: 95)) == .claim(limit: 90), "whole batches of 30 only")
        #expect(schedule.next(situation(pending: 2_000)) == .claim(limit: 500))
        #expect(schedule.next(situation(pending: 2_000, inFlight: ["a"])) == .claim(limit: 500), "a second upload")
        #expect(schedule.next(situation(pending: 2_000, inFlight: ["a", "b"])) == .wait(until: nil), "two at most")
        #expect(schedule.next(situation(pending: 95, now: 60_000)) == .claim(limit: 95), "aged: the rest goes too")
        #expect(schedule.next(situation(pending: 45, inFlight: ["a"])) == .wait(until: nil), "no backlog: one at a time")
    }

    @Test("a batch claimed and not in flight (left by a cancelled upload) is due at once")
    func waitingBatch() {
        #expect(schedule.next(situation(pending: 0, claimed: ["old"], lowest: 1)) == .claim(limit: 30))
        #expect(schedule.next(situation(pending: 0, claimed: ["old"], lowest: 1, inFlight: ["old"])) == .wait(until: nil))
    }

    @Test("after a failure nothing goes before its wait ends; offline, nothing goes at all")
    func waitsAndOffline() {
        #expect(schedule.next(situation(pending: 30, now: 1_000, notBefore: 5_000)) == .wait(until: 5_000))
        #expect(schedule.next(situation(pending: 30, now: 5_000, notBefore: 5_000)) == .claim(limit: 30))
        #expect(schedule.next(situation(pending: 30, reachable: false)) == .offline)
    }

    @Test("on an expensive path work that can wait waits for a cheaper one, up to its limit; a flush does not")
    func expensivePath() {
        var policy = OperationLog.Policy()
        policy.deferOnExpensivePath = .seconds(600)
        let deferring = UploadSchedule(policy)
        #expect(deferring.next(situation(pending: 30, oldest: 0, expensive: true)) == .wait(until: 600_000))
        #expect(deferring.next(situation(pending: 30, oldest: 0, now: 600_000, expensive: true)) == .claim(limit: 30))
        #expect(deferring.next(situation(pending: 3, lowest: 1, expensive: true, sendThrough: 3)) == .claim(limit: 30))
        #expect(deferring.next(situation(pending: 30, expensive: false)) == .claim(limit: 30))
    }

    @Test("a 413 halves the batch (never below the collector's stated limit's ceiling, never to zero); successes double it back")
    func splitting() {
        #expect(schedule.next(situation(pending: 2_000, sizeLimit: 60)) == .claim(limit: 60))
        #expect(schedule.sizeLimit(afterTooLarge: 500, statedLimit: nil) == 250)
        #expect(schedule.sizeLimit(afterTooLarge: 500, statedLimit: 100) == 100)
        #expect(schedule.sizeLimit(afterTooLarge: 1, statedLimit: nil) == 1)
        #expect(schedule.sizeLimit(afterStoring: 100) == 200)
        #expect(schedule.sizeLimit(afterStoring: 300) == 500, "back to the largest batch, not past it")
    }

    @Test("back-off doubles from the base within its cap, jittered in its upper half; Retry-After wins when longer, up to a day")
    func backoff() {
        var generator = SystemRandomNumberGenerator()
        for failures in 1...12 {
            let wait = schedule.backoff.delay(afterFailures: failures, retryAfter: nil, using: &generator)
            let full = min(Duration.seconds(1) * (1 << (failures - 1)), .seconds(300))
            #expect(wait >= full / 2 && wait <= full, "after \(failures) failures: \(wait)")
        }
        #expect(schedule.backoff.delay(afterFailures: 1, retryAfter: .seconds(3600), using: &generator) == .seconds(3600))
        #expect(schedule.backoff.delay(afterFailures: 1, retryAfter: .seconds(999_999), using: &generator) == .seconds(86_400))
    }
}
