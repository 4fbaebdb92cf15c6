import Foundation

/// What the log does with each answer of the collector: which events leave the queue, which are
/// split or dropped, how long the next upload waits; and the flushes that end with them.
extension OperationLog {
    /// Acts on the answer to one upload: what leaves the queue, what is split, how long to wait.
    func settle(_ completion: Completion, _ uploader: inout UploaderState, schedule: UploadSchedule) async {
        let (batch, report) = (completion.batch, completion.report)
        do {
            switch completion.answer {
            case .stored(let refused):
                uploader.sizeLimit = schedule.sizeLimit(afterStoring: uploader.sizeLimit)
                // A wait still to come was asked for by an answer to another upload in flight: it stays.
                if let notBefore = uploader.notBefore, notBefore <= BootClock.nowMilliseconds() {
                    uploader.notBefore = nil
                    try await queue.setNotBefore(nil)
                }
                if !refused.isEmpty { logRefused(refused, of: batch) }
                onUpload?(report)
            case .tooLarge(let stated):
                // Not a failure: the same events go again at once, in smaller batches.
                onUpload?(report)
                if batch.events.count > 1 {
                    uploader.sizeLimit = schedule.sizeLimit(afterTooLarge: batch.events.count, statedLimit: stated)
                    _ = try await queue.split(batch.key, keeping: uploader.sizeLimit)
                } else {
                    logger.error(
                        "operation log: the collector refuses an event as too large; dropped",
                        metadata: ["name": "\(batch.events.first?.name ?? "")"])
                    try await queue.drop(batch.key, as: .refused)
                }
            case .refused:
                onUpload?(report)
                logger.error(
                    "operation log: the collector refuses the batch as malformed; its events are dropped",
                    metadata: ["events": "\(batch.events.count)", "error": "\(report.failure.map { "\($0)" } ?? "")"])
                try await queue.drop(batch.key, as: .refused)
            case .failed(let failure, let retryAfter):
                let attempts = try await queue.recordFailure(batch.key)
                var reported = report
                if attempts >= max(policy.maximumAttempts, 1) {
                    logger.error(
                        "operation log: a batch failed too often; its events are dropped",
                        metadata: ["events": "\(batch.events.count)", "attempts": "\(attempts)", "error": "\(failure)"])
                    try await queue.drop(batch.key, as: .abandoned)
                } else {
                    var generator = SystemRandomNumberGenerator()
                    let delay = schedule.backoff.delay(afterFailures: attempts, retryAfter: retryAfter, using: &generator)
                    let until = BootClock.nowMilliseconds() + Backoff.milliseconds(delay)
                    uploader.notBefore = max(uploader.notBefore ?? until, until)
                    try await queue.setNotBefore(uploader.notBefore)
                    reported.backoff = delay
                    logger.warning(
                        "operation log upload failed; events kept",
                        metadata: ["events": "\(batch.events.count)", "error": "\(failure)", "retryIn": "\(delay)"])
                }
                // The flushes waiting on this upload end with it before the app hears of it: a
                // flush the app starts on hearing waits for the next upload, as any flush
                // started during a back-off does, instead of ending with a failure that came
                // before it.
                failFlushes(with: failure)
                onUpload?(reported)
            }
        } catch {
            logger.error("operation log could not update its queue", metadata: ["error": "\(error)"])
        }
    }

    /// Sends `batch`; a stored batch is removed from the queue here.
    func upload(_ batch: OperationLogQueue.Batch) async -> (UploadReport, Answer) {
        let json = OperationBatchFormat.encode(batch.events, sentAt: Self.epochMilliseconds(wallClock()))
        var report = UploadReport(
            batchKey: batch.key, eventCount: batch.events.count, bodyBytes: 0, uncompressedBytes: json.count)
        let body: Data
        do {
            body = try Gzip.compress(json)
        } catch {
            let failure = RunwayError.invalidRequest(reason: "the batch could not be compressed: \(error)")
            report.failure = failure
            return (report, .failed(failure, retryAfter: nil))
        }
        report.bodyBytes = body.count
        let api = OperationLogUploadAPI(
            service: service, path: policy.path, batchKey: batch.key, timeout: policy.timeout,
            retryPolicy: policy.retryPolicy)
        let (result, retryAfter, _) = await engine.perform(
            api, params: [:], body: .data(body, contentType: "application/json"), loadID: nil, ignoringCache: true,
            hooks: TransferHooks())
        switch result {
        case .success(let response):
            let refused = Self.refusedEvents(in: response.body, count: batch.events.count)
            do {
                try await queue.acknowledge(batch.key, refused: refused.count)
            } catch {
                // Sent again later: the collector counts it as duplicates, nothing is lost.
                let failure = RunwayError.invalidRequest(reason: "the acknowledged batch could not be removed: \(error)")
                report.failure = failure
                return (report, .failed(failure, retryAfter: nil))
            }
            return (report, .stored(refused: refused))
        case .failure(let error):
            report.failure = error
            report.backoff = retryAfter
            return (report, Answer(failure: error, retryAfter: retryAfter))
        }
    }

    /// One warning per batch with refused events, naming each (never its payload).
    private func logRefused(_ refused: [RefusedEvent], of batch: OperationLogQueue.Batch) {
        let named = refused.map { "\(batch.events[$0.index].name)#\($0.index) \($0.field): \($0.reason)" }
        logger.warning(
            "operation log: the collector refused events; they are dropped",
            metadata: ["refused": "\(refused.count)", "events": "\(named.joined(separator: ", "))"])
    }

    static func epochMilliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return milliseconds.isFinite && abs(milliseconds) < 0x1p62 ? Int64(milliseconds) : 0
    }

    /// Ends the flushes whose events `queued` shows gone (``settles(_:in:)``).
    func resolveFlushes(_ queued: OperationLogQueue.State) {
        let done = state.withLock { state -> [FlushWaiter] in
            let done = state.flushes.filter { Self.settles($0.through, in: queued) }
            state.flushes.removeAll { Self.settles($0.through, in: queued) }
            return done
        }
        for flush in done { flush.continuation.resume() }
    }

    /// Whether `queued`, the queue as the uploader read it, shows every event up to sequence
    /// `through` gone: it saw them queued (a state read before a flush's events were committed
    /// shows them neither queued nor gone — an empty queue then ended a flush whose event was
    /// never sent) and none of them is left.
    static func settles(_ through: Int64, in queued: OperationLogQueue.State) -> Bool {
        through <= queued.highestSequence && through < (queued.lowestSequence ?? .max)
    }

    func failFlushes(with error: RunwayError) {
        let failed = state.withLock { state -> [FlushWaiter] in
            defer { state.flushes = [] }
            return state.flushes
        }
        for flush in failed { flush.continuation.resume(throwing: OperationLogError.uploadFailed(error)) }
    }
}
