import Foundation
import HTTPTypes
import Runway

extension DemoChapter {
    /// 95 taps: whole batches of 30 now (90 events; in one upload when they arrive as a
    /// backlog), the 5 left at the next launch; signed, gzip, stored once (打包上傳:
    /// bursty, not chatty).
    static let operationLogs = DemoChapter("oplog", "Operation logs in batches of 30 (seed 003: 打包上傳)") { context, log in
        try context.engine.register(Service(id: "oplog", baseURLs: [.release: context.baseURL], credentials: .init(signer: context.signer)))
        let storedBefore = try await Self.collectedEvents(context.engine)
        var policy = OperationLog.Policy()
        policy.maximumAge = .seconds(3600)
        let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        let operations = try OperationLog(
            engine: context.engine, service: "oplog", container: context.container, policy: policy
        ) { sink.yield($0) }
        for index in 0..<95 { try operations.record("listing.tap", payload: ["position": .int(index % 20)]) }
        var uploads: [OperationLog.UploadReport] = []
        for await report in reports {
            uploads.append(report)
            if uploads.reduce(0, { $0 + $1.eventCount }) >= 90 || report.failure != nil { break }
        }
        let left = try await operations.status().pending
        await operations.close()
        let sent = uploads.reduce(0) { $0 + $1.bodyBytes }
        let json = uploads.reduce(0) { $0 + $1.uncompressedBytes }
        log.say("95 taps recorded → \(uploads.count) upload(s) of \(uploads.map { String($0.eventCount) }.joined(separator: ", ")) events, "
            + "\(sent) B gzip for \(json) B of JSON; \(left) wait for a full batch")

        let (nextReports, nextSink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        let relaunched = try OperationLog(
            engine: context.engine, service: "oplog", container: context.container, policy: policy
        ) { nextSink.yield($0) }
        var leftovers = 0
        for await report in nextReports {
            leftovers = report.eventCount
            break
        }
        await relaunched.close()
        let stored = try await Self.collectedEvents(context.engine) - storedBefore
        log.say("next launch → 1 upload of the \(leftovers) left; the collector stored \(stored) new events, each once")
        log.figure("uploads", .array(uploads.map { .int($0.eventCount) }))
        log.figure("leftovers", .int(leftovers))
        log.figure("gzipBytes", .int(sent))
        log.figure("jsonBytes", .int(json))
        log.figure("stored", .int(stored))
        try log.require(
            uploads.reduce(0) { $0 + $1.eventCount } == 90 && uploads.allSatisfy { $0.eventCount.isMultiple(of: 30) },
            "expected 90 events sent in whole batches of 30")
        try log.require(leftovers == 5 && stored == 95, "expected 5 left for the next launch and 95 stored")
    }

    /// The events the collector holds (`GET /oplog/stats`).
    private static func collectedEvents(_ engine: Engine) async throws -> Int {
        try await engine.perform(CollectorStatsAPI()).get().json?["events"]?.intValue ?? 0
    }
}
