import Foundation

/// The uploader: the batches the schedule calls for, sent through the engine, several at once
/// while a backlog waits.
extension OperationLog {
    /// What the uploader carries from one round to the next.
    struct UploaderState {
        /// Until when (``BootClock`` milliseconds) uploads wait after a failure.
        var notBefore: Int64?
        /// Halved by each 413, doubled back by each success: how many events the collector takes.
        var sizeLimit: Int
        /// The uploads in flight, by batch key.
        var running: [String: Task<Void, Never>] = [:]
    }

    /// An upload that ended, waiting for the uploader to act on its answer.
    struct Completion: Sendable {
        var batch: OperationLogQueue.Batch
        var report: UploadReport
        var answer: Answer
    }

    /// Uploads until the log closes: each round settles the answers that came in, reads the
    /// queue, and does what the ``UploadSchedule`` says.
    func runUploader(notBefore storedNotBefore: Int64?) async {
        let schedule = UploadSchedule(policy)
        var uploader = UploaderState(notBefore: storedNotBefore, sizeLimit: schedule.largestBatch)
        while !Task.isCancelled {
            for completion in completions.withLock({ completions in
                defer { completions = [] }
                return completions
            }) {
                uploader.running[completion.batch.key] = nil
                await settle(completion, &uploader, schedule: schedule)
            }
            let queued: OperationLogQueue.State
            do {
                queued = try await queue.state()
            } catch {
                if Task.isCancelled { break }
                logger.error("operation log could not read its queue", metadata: ["error": "\(error)"])
                await uploaderBell.wait(timeout: policy.baseBackoff)
                continue
            }
            resolveFlushes(queued)
            let now = BootClock.nowMilliseconds()
            let path = engine.network?.path
            let step = schedule.next(
                UploadSchedule.Situation(
                    queued: queued, now: now, notBefore: uploader.notBefore, reachable: path?.isReachable ?? true,
                    expensive: path?.isExpensive ?? false, sendThrough: state.withLock { $0.sendThrough },
                    inFlight: Set(uploader.running.keys), sizeLimit: uploader.sizeLimit))
            let limit: Int
            switch step {
            case .wait(let until):
                await uploaderBell.wait(timeout: until.map { .milliseconds(max($0 - now, 1)) })
                continue
            case .offline:
                // Nothing to try until the path changes (the monitor rings).
                failFlushes(with: .noNetwork(reason: .unreachable))
                await uploaderBell.wait(timeout: nil)
                continue
            case .claim(let most):
                limit = most
            }
            let batch: OperationLogQueue.Batch?
            do {
                batch = try await queue.claim(
                    limit: limit, byteBudget: policy.maximumBatchBytes, excluding: Set(uploader.running.keys))
            } catch {
                if Task.isCancelled { break }
                logger.error("operation log could not claim a batch", metadata: ["error": "\(error)"])
                await uploaderBell.wait(timeout: policy.baseBackoff)
                continue
            }
            guard let batch else {
                // Everything queued is in flight: the next answer rings.
                if !uploader.running.isEmpty { await uploaderBell.wait(timeout: nil) }
                continue
            }
            uploader.running[batch.key] = Task { [self] in
                let (report, answer) = await upload(batch)
                completions.withLock { $0.append(Completion(batch: batch, report: report, answer: answer)) }
                uploaderBell.ring()
            }
        }
        // Closing: uploads in flight are cancelled, their batches sent again at the next launch.
        for task in uploader.running.values { task.cancel() }
        for task in uploader.running.values { await task.value }
    }
}
