/// When the operation log's uploader sends, and how much: the queue's state and the time in, the
/// next step out, with the rules for batch sizes, backlogs, deferral to a cheaper path, splitting
/// after a 413 and back-off after a failure. A plain value with no I/O, so that every rule is
/// unit-tested without a collector; the uploader does what it says.
///
/// Times are ``BootClock`` milliseconds: a clock the user cannot set.
struct UploadSchedule: Sendable {
    /// What the uploader does next.
    enum Step: Equatable, Sendable {
        /// Nothing to send now: wait until then (`nil`: until something rings — a record, an
        /// answer, a flush, a change of path).
        case wait(until: Int64?)
        /// The network is unreachable: flushes fail now, and nothing is tried until the path
        /// changes.
        case offline
        /// Claim a batch of at most this many events and send it.
        case claim(limit: Int)
    }

    /// What the uploader knows when it decides.
    struct Situation: Sendable {
        /// The queue as it is.
        var queued: OperationLogQueue.State
        /// Now.
        var now: Int64
        /// Until when uploads wait after a failure.
        var notBefore: Int64?
        /// Whether the device's network is reachable (`true` without a monitor).
        var reachable = true
        /// Whether the path is expensive (cellular).
        var expensive = false
        /// Events up to this sequence number go without waiting for a full batch (a flush, or
        /// leftovers of an earlier launch).
        var sendThrough: Int64 = 0
        /// The keys of the batches in flight.
        var inFlight: Set<String> = []
        /// How many events the collector takes in one batch, as learnt from its 413s.
        var sizeLimit: Int
    }

    let batchSize: Int
    let maximumAge: Int64
    let deferOnExpensivePath: Int64?
    let backlogBatchSize: Int
    let maximumConcurrentUploads: Int
    let backoff: Backoff

    /// The schedule `policy` sets.
    init(_ policy: OperationLog.Policy) {
        batchSize = max(policy.batchSize, 1)
        maximumAge = Backoff.milliseconds(policy.maximumAge)
        deferOnExpensivePath = policy.deferOnExpensivePath.map(Backoff.milliseconds)
        backlogBatchSize = policy.backlogBatchSize
        maximumConcurrentUploads = max(policy.maximumConcurrentUploads, 1)
        backoff = Backoff(base: policy.baseBackoff, maximum: policy.maximumBackoff)
    }

    /// The largest batch the collector is asked to take: the first size limit, and the one a
    /// run of successes grows back to.
    var largestBatch: Int { max(backlogBatchSize, batchSize) }

    /// The next step in `situation`.
    func next(_ situation: Situation) -> Step {
        let queued = situation.queued
        let now = situation.now
        if let notBefore = situation.notBefore, notBefore > now { return .wait(until: notBefore) }
        guard situation.reachable else { return .offline }
        let forced = queued.pending > 0 && (queued.lowestSequence ?? .max) <= situation.sendThrough
        let aged = queued.oldestQueued.map { now - $0 >= maximumAge } ?? false
        let waitingBatch = queued.claimedBatches.contains { !situation.inFlight.contains($0) }
        var due = waitingBatch || queued.pending >= batchSize || forced || aged
        var wakeAt = queued.oldestQueued.map { $0 + maximumAge }
        if due, !forced, situation.expensive, let deferral = deferOnExpensivePath,
            let oldest = queued.lowestQueuedAt ?? queued.oldestQueued, now - oldest < deferral
        {
            // Work that can wait waits for a cheaper path, up to its limit.
            due = false
            wakeAt = oldest + deferral
        }
        // A backlog goes in larger batches, several at once: fewer round trips, and the client's
        // work overlaps the collector's. Unless something is due by age or asked for, only whole
        // batches of batchSize go.
        let backlog = queued.pending - batchSize > batchSize  // more than two batches, without overflow
        let concurrent = backlog ? maximumConcurrentUploads : 1
        guard due else { return .wait(until: wakeAt) }
        guard situation.inFlight.count < concurrent else { return .wait(until: nil) }
        var limit = batchSize
        if backlog {
            let whole = forced || aged ? queued.pending : queued.pending / batchSize * batchSize
            limit = max(min(backlogBatchSize, whole), batchSize)
        }
        return .claim(limit: min(limit, situation.sizeLimit))
    }

    /// The size limit after a batch was stored: doubled back towards ``largestBatch``.
    func sizeLimit(afterStoring current: Int) -> Int {
        current > largestBatch / 2 ? largestBatch : current * 2
    }

    /// The size limit after a batch of `count` events was refused as too large (with the
    /// collector's stated event limit, if it gave one): half the batch, at least one.
    func sizeLimit(afterTooLarge count: Int, statedLimit: Int?) -> Int {
        max(min(count / 2, statedLimit ?? .max), 1)
    }
}
