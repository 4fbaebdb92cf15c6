import Crypto
import Foundation
import Hummingbird
import GRDB
@testable import Runway
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The client queue against a real collector: batches of 30, leftovers at the next launch,
/// nothing lost offline, bounds with typed answers.
@Suite("Operation log", .timeLimit(.minutes(10)))
struct OperationLogTests {
    @Test("95 events: whole batches of 30 go (one upload while a backlog waits), 5 wait; the next launch uploads the 5")
    func batchesOfThirtyAndLeftoversAtLaunch() async throws {
        try await withCollector { fixture in
            let (log, reports) = try fixture.openLog()
            var recorded: Set<String> = []
            for index in 0..<95 { recorded.insert(try log.record("tap", payload: ["n": .int(index)])) }
            var uploads: [OperationLog.UploadReport] = []
            for await report in reports {
                uploads.append(report)
                if uploads.reduce(0, { $0 + $1.eventCount }) >= 90 { break }
            }
            // However the writer's commits fell, only whole batches left.
            #expect(uploads.reduce(0) { $0 + $1.eventCount } == 90)
            #expect(uploads.allSatisfy { $0.eventCount.isMultiple(of: 30) })
            #expect(uploads.allSatisfy { $0.failure == nil })
            #expect(uploads.allSatisfy { $0.bodyBytes < $0.uncompressedBytes }, "batches travel gzip-compressed")
            let status = try await log.status()
            #expect(status.pending == 5 && status.inFlight == 0 && status.uploaded == 90)
            await log.close()
            #expect(try await fixture.store.summary().events == 90)

            // The next launch: a new log on the same container sends what the last one left.
            let (relaunched, relaunchReports) = try fixture.openLog()
            let leftover = await relaunchReports.first(1)
            #expect(leftover.map(\.eventCount) == [5])
            #expect(try await relaunched.status().pending == 0)
            await relaunched.close()
            #expect(Set(try await fixture.store.allEventIDs()) == recorded)
        }
    }

    @Test("An event waits no longer than the maximum age for its batch to fill")
    func maximumAgeSendsAPartialBatch() async throws {
        try await withCollector { fixture in
            var policy = CollectorFixture.policy
            policy.maximumAge = .milliseconds(100)
            let (log, reports) = try fixture.openLog(policy)
            try await log.recordCommitted("tap")
            try await log.recordCommitted("tap")
            // Both leave in partial batches (one, or two if the first aged alone already).
            var sent = 0
            for await report in reports {
                #expect(report.failure == nil && report.eventCount < 30)
                sent += report.eventCount
                if sent >= 2 { break }
            }
            #expect(sent == 2)
            await log.close()
        }
    }

    @Test("Collector unreachable: nothing lost; collector back: every event arrives once")
    func offlineKeepsEverything() async throws {
        try await withCollector { fixture in
            // Point the service at a port where nothing listens (the server started, then stopped).
            let gone = try await DemoServer.start()
            let goneURL = gone.baseURL
            await gone.stop()
            try fixture.engine.register(Service(id: "oplog", baseURLs: [.release: goneURL]))
            let (log, _) = try fixture.openLog()
            var recorded: Set<String> = []
            for index in 0..<40 { recorded.insert(try log.record("tap", payload: ["n": .int(index)])) }
            await #expect(throws: OperationLogError.self) { try await log.flush() }
            let offline = try await log.status()
            #expect(offline.pending + offline.inFlight == 40 && offline.uploaded == 0)

            try fixture.engine.register(Service(id: "oplog", baseURLs: [.release: fixture.server.baseURL]))
            var delivered = false
            for _ in 0..<50 where !delivered {
                delivered = (try? await log.flush()) != nil
            }
            #expect(delivered)
            let ids = try await fixture.store.allEventIDs()
            #expect(ids.count == 40 && Set(ids) == recorded)
            #expect(try await log.status().uploaded == 40)
            await log.close()
        }
    }

    @Test("A refused upload keeps its events and honours Retry-After")
    func retryAfterIsHonoured() async throws {
        // An hour: the next try must not come while the test looks (at 7 s, a busy machine's
        // slow test saw the events uploaded by then).
        try await withCollector(fault: { batch in batch == 1 ? .tooManyRequests(retryAfter: 3600) : nil }) { fixture in
            let (log, reports) = try fixture.openLog()
            for _ in 0..<30 { try log.record("tap") }
            let refused = try #require(await reports.first(1).first)
            guard case .httpStatus(429, _)? = refused.failure else {
                Issue.record("expected 429, got \(String(describing: refused.failure))")
                return
            }
            #expect((refused.backoff ?? .zero) >= .seconds(3600), "the wait is at least what Retry-After asked")
            let status = try await log.status()
            #expect(status.inFlight == 30 && status.uploaded == 0)
            #expect(try await fixture.store.summary().events == 0)
            await log.close()
        }
    }

    @Test("A flush during an hour's back-off ends at once when its task is cancelled, and at its deadline", .timeLimit(.minutes(10)))
    func flushHonoursCancellationAndDeadline() async throws {
        try await withCollector(fault: { batch in batch == 1 ? .tooManyRequests(retryAfter: 3600) : nil }) { fixture in
            let (log, reports) = try fixture.openLog()
            for _ in 0..<30 { try log.record("tap") }
            let refused = try #require(await reports.first(1).first)
            #expect((refused.backoff ?? .zero) >= .seconds(3600))
            // Before, both waited out the hour: the time limit would end this test instead.
            let flushing = Task { try await log.flush() }
            flushing.cancel()
            await #expect {
                try await flushing.value
            } throws: { error in
                guard case .uploadFailed(.cancelled)? = error as? OperationLogError else { return false }
                return true
            }
            await #expect {
                try await log.flush(within: .milliseconds(200))
            } throws: { error in
                guard case .uploadFailed(.timeout)? = error as? OperationLogError else { return false }
                return true
            }
            let status = try await log.status()
            #expect(status.inFlight == 30 && status.uploaded == 0, "the events stay queued")
            await log.close()
        }
    }

    @Test("A failed upload ends the flushes waiting on it before the app hears of it", .timeLimit(.minutes(10)))
    func failedUploadEndsItsFlushesBeforeItsReport() async throws {
        try await withCollector(fault: { batch in batch == 1 ? .tooManyRequests(retryAfter: 3600) : nil }) { fixture in
            // A flush the app starts on hearing of the failure must wait for the next upload,
            // not end with the failure before it: so none may still be waiting when it hears.
            let opened = Locked<OperationLog?>(nil)
            let waitingWhenHeard = Locked<[Int]>([])
            let log = try OperationLog(
                engine: fixture.engine, service: "oplog", container: fixture.container, policy: CollectorFixture.policy,
                onUpload: { report in
                    guard report.failure != nil else { return }
                    let waiting = opened.withLock { $0 }?.state.withLock { $0.flushes.count } ?? -1
                    waitingWhenHeard.withLock { $0.append(waiting) }
                })
            opened.withLock { $0 = log }
            // Fewer events than a batch: only the flush sends them, so it waits before the upload.
            for _ in 0..<5 { try log.record("tap") }
            await #expect {
                try await log.flush()
            } throws: { error in
                guard case .uploadFailed(.httpStatus(429, _))? = error as? OperationLogError else { return false }
                return true
            }
            #expect(waitingWhenHeard.withLock { $0 } == [0], "the flush had ended when the failure was reported")
            await log.close()
        }
    }

    @Test("A batch sent again after a failure keeps its idempotency key and its events")
    func retriedBatchKeepsItsKey() async throws {
        try await withCollector(fault: { batch in batch == 1 ? .serverError : nil }) { fixture in
            var policy = CollectorFixture.policy
            policy.retryPolicy = .never
            let (log, reports) = try fixture.openLog(policy)
            for _ in 0..<30 { try log.record("tap") }
            let both = await reports.first(2)
            #expect(both.count == 2 && both[0].failure != nil && both[1].failure == nil)
            #expect(both[0].batchKey == both[1].batchKey)
            #expect(try await fixture.store.summary().events == 30)
            await log.close()
        }
    }

    @Test("Signed uploads pass the collector's verifier; unsigned ones store nothing")
    func signedUploads() async throws {
        let secret = SymmetricKey(size: .bits256)
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["oplog": [secret]])
        try await withCollector(signer: HMACSigner(keyID: "oplog", secret: secret), verifier: verifier) { fixture in
            let (log, _) = try fixture.openLog()
            try log.record("tap")
            try await log.flush()
            #expect(try await fixture.store.summary().events == 1)
            await log.close()

            try fixture.engine.register(Service(id: "oplog", baseURLs: [.release: fixture.server.baseURL]))
            let (unsigned, reports) = try fixture.openLog()
            try unsigned.record("tap")
            await #expect(throws: OperationLogError.self) { try await unsigned.flush() }
            let refused = try #require(await reports.first(1).first)
            guard case .httpStatus(401, let body)? = refused.failure else {
                Issue.record("expected 401, got \(String(describing: refused.failure))")
                return
            }
            #expect(String(decoding: body, as: UTF8.self).contains("missing_header"))
            #expect(try await fixture.store.summary().events == 1)
            await unsigned.close()
        }
    }

    @Test("Bad events are refused at record with a typed error, and nothing is queued")
    func recordRefusesBadEvents() async throws {
        try await withCollector { fixture in
            let (log, _) = try fixture.openLog()
            let big = JSON.string(String(repeating: "x", count: 40_000))
            let refusal = Result<String, OperationLogError> { () throws(OperationLogError) in
                try log.record("tap", payload: ["blob": big])
            }
            guard case .failure(.eventTooLarge(let size, let limit)) = refusal else {
                Issue.record("expected eventTooLarge, got \(refusal)")
                return
            }
            #expect(size > 40_000 && limit == 32 * 1024)
            #expect(throws: OperationLogError.invalidName("")) { try log.record("") }
            let long = String(repeating: "n", count: 129)
            #expect(throws: OperationLogError.invalidName(long)) { try log.record(long) }
            #expect(throws: OperationLogError.self) { try log.record("tap", payload: ["bad": .double(.nan)]) }
            // What a collector's database refuses would hold back every event behind it: a NUL
            // (PostgreSQL's text and jsonb cannot hold one) and a time before 1970.
            #expect(throws: OperationLogError.invalidName("t\u{0}p")) { try log.record("t\u{0}p") }
            #expect(throws: OperationLogError.self) { try log.record("tap", payload: ["note": "a\u{0}b"]) }
            #expect(throws: OperationLogError.self) { try log.record("tap", payload: [["k\u{0}": 1]]) }
            let before1970 = Date(timeIntervalSince1970: -1)
            #expect(throws: OperationLogError.invalidTime(before1970)) { try log.record("tap", at: before1970) }
            let farFuture = Date(timeIntervalSince1970: 1e300)
            #expect(throws: OperationLogError.invalidTime(farFuture)) { try log.record("tap", at: farFuture) }
            let status = try await log.status()
            #expect(status.pending == 0 && status.inFlight == 0)
            // The events after them go as usual.
            let good = try log.record("tap", payload: ["note": "a\\u0000b is only text"], at: Date(timeIntervalSince1970: 0))
            try await log.flush()
            #expect(try await fixture.store.allEventIDs() == [good])
            await log.close()
            #expect(throws: OperationLogError.closed) { try log.record("tap") }
        }
    }

    @Test("A full queue drops the oldest unsent events, counts them and says so")
    func fullQueueDropsOldestAndCounts() async throws {
        try await withCollector { fixture in
            var policy = CollectorFixture.policy
            policy.capacity = 10
            policy.batchSize = 1_000
            let (log, _) = try fixture.openLog(policy)
            var ids: [String] = []
            for index in 0..<25 { ids.append(try log.record("tap", payload: ["n": .int(index)])) }
            let status = try await log.status()
            #expect(status.pending == 10 && status.dropped == 15, "\(status)")
            #expect(fixture.log.lines.contains { $0.level == .warning && $0.message.contains("dropped") })
            try await log.flush()
            #expect(Set(try await fixture.store.allEventIDs()) == Set(ids.suffix(10)), "the newest 10 were kept")
            await log.close()
        }
    }

    @Test("A damaged queue is moved aside with one log line, and the log starts again")
    func damagedQueueStartsAgain() async throws {
        try await withCollector { fixture in
            let url = try fixture.container.url(for: "operation-log/queue.sqlite", in: .applicationSupport)
            try Data(repeating: 0x5A, count: 8192).write(to: url)
            let (log, _) = try fixture.openLog()
            #expect(fixture.log.lines.filter { $0.level == .error && $0.message.contains("damaged") }.count == 1)
            let folder = url.deletingLastPathComponent()
            let aside = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".corrupt-") }
            #expect(aside.count == 1)
            try log.record("tap")
            try await log.flush()
            #expect(try await fixture.store.summary().events == 1)
            await log.close()
        }
    }

    @Test("An event whose row cannot be read (a tampered file) leaves the queue counted and logged; the events around it are uploaded")
    func unreadableRowDoesNotStopUploads() async throws {
        try await withCollector { fixture in
            let ids = try await fixture.queueAndClose(3)
            // A name that is not UTF-8: GRDB's subscript would trap on it, its throwing decode fails.
            try await fixture.alterQueueFile("UPDATE event SET name = X'FF' WHERE id = ?", arguments: [ids[1]])

            let (relaunched, _) = try fixture.openLog()
            // The bound only ends a failing run (every claim failing) instead of the suite's limit.
            try await relaunched.flush(within: .seconds(120))
            #expect(Set(try await fixture.store.allEventIDs()) == [ids[0], ids[2]])
            let status = try await relaunched.status()
            #expect(status.unreadable == 1 && status.uploaded == 2 && status.pending == 0 && status.inFlight == 0, "\(status)")
            #expect(fixture.log.lines.contains { $0.level == .error && $0.message.contains("could not be read") })
            await relaunched.close()
        }
    }

    @Test("A claimed batch whose key in the file is not text (tampered) goes again under a new key; nothing is lost")
    func tamperedBatchKeyIsClaimedAgain() async throws {
        try await withCollector { fixture in
            let ids = try await fixture.queueAndClose(2)
            // As if a batch had been claimed, its key then damaged: bytes that are not UTF-8.
            try await fixture.alterQueueFile("UPDATE event SET batch = X'FF'")

            let (relaunched, _) = try fixture.openLog()
            // The bound only ends a failing run (its events never sent) instead of the suite's limit.
            try await relaunched.flush(within: .seconds(120))
            #expect(Set(try await fixture.store.allEventIDs()) == Set(ids))
            let status = try await relaunched.status()
            #expect(status.uploaded == 2 && status.pending == 0 && status.inFlight == 0, "\(status)")
            await relaunched.close()
        }
    }

    @Test("The queue lives in application support, excluded from backups")
    func queueIsExcludedFromBackups() async throws {
        try await withCollector { fixture in
            let (log, _) = try fixture.openLog()
            try await log.recordCommitted("tap")
            let url = try fixture.container.url(for: "operation-log/queue.sqlite", in: .applicationSupport)
            #expect(FileManager.default.fileExists(atPath: url.path))
            #expect(fixture.container.role(containing: url) == .applicationSupport)
            #expect(BackupExclusion.isExcluded(url))
            await log.close()
        }
    }
}
