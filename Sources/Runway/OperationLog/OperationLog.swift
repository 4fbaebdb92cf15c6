public import Foundation
public import Logging
public import RunwayStorage

/// User operation logs, sent in bursts: events are queued on disk and uploaded in batches of 30
/// (seed 003), so the radio wakes once per batch instead of once per tap (seed 001).
///
/// ``record(_:payload:at:)`` hands the event to a serial writer and returns at once; the writer
/// commits whatever has arrived in one transaction. An upload starts when a batch is full, when
/// the oldest waiting event reaches ``Policy/maximumAge``, on ``flush()`` (call it when the
/// app goes to the background), and at launch for events left by an earlier run. One upload is in
/// flight at a time; it goes through the engine (the service's signing, logging and the
/// configured retries apply) as gzip-compressed JSON with an idempotency key per batch, and
/// says when it was sent by the device's clock, so the collector can correct a wrong one. While
/// a backlog waits, batches grow to ``Policy/backlogBatchSize``.
///
/// Events leave the queue when the collector answers for them: a 2xx stores them, but for the
/// events it lists as refused (dropped and counted in ``Status/refused``); a 400 or 422 refuses
/// the batch (counted the same); a 413 splits it in half (a single event too large is refused).
/// Anything else keeps the events and waits, doubling with jitter and honouring `Retry-After` —
/// persisted, so a relaunch in the same boot waits too — until the batch has failed
/// ``Policy/maximumAttempts`` times (then it is dropped and counted in
/// ``Status/abandoned``): a batch is never retried forever. Ages and waits are measured on a
/// clock the user cannot set (``BootClock``).
///
/// Keep one log per container for the life of the app: its writer and uploader run until
/// ``close()``.
///
/// For example:
///
/// ```swift
/// let log = try OperationLog(engine: engine, service: .analytics, container: container)
/// try log.record("listing.opened", payload: ["listing": 42])
/// // when the app goes to the background:
/// try await log.flush()
/// ```
public final class OperationLog: Sendable {
    /// What the log keeps and how it uploads: batch sizes and ages, back-off, capacity and the
    /// queue's file.
    public struct Policy: Sendable {
        /// The path of the collector's batch route on the service. Default `/oplog/batches`.
        public var path: String = "/oplog/batches"
        /// The most events one upload carries. Default 30.
        public var batchSize: Int = 30
        /// How long an event may wait for its batch to fill before it is sent anyway. Default 60 s.
        public var maximumAge: Duration = .seconds(60)
        /// The largest event accepted, encoded, in bytes. Default 32 KB.
        public var maximumEventSize: Int = 32 * 1024
        /// The most events kept; beyond it the oldest unsent ones are dropped and counted.
        /// Default 10,000.
        public var capacity: Int = 10_000
        /// The wait after the first failed upload; doubled after each further failure.
        /// Default 1 s.
        public var baseBackoff: Duration = .seconds(1)
        /// The longest wait between failed uploads, unless `Retry-After` asks for longer.
        /// Default 5 minutes.
        public var maximumBackoff: Duration = .seconds(300)
        /// The engine's retries within one upload. Default: one retry of a transient failure.
        public var retryPolicy = RetryPolicy(maximumRetries: 1, retriesNonIdempotentMethods: true)
        /// The deadline of one upload attempt. Default 30 s.
        public var timeout: Duration = .seconds(30)
        /// How long uploads may wait for a path that is not expensive (Wi-Fi rather than
        /// cellular) before they go anyway; `nil` (the default) sends on any path. ``flush()``
        /// sends at once.
        public var deferOnExpensivePath: Duration?
        /// The most events one upload carries while a backlog waits (more than two batches of
        /// ``batchSize``): a backlog drains in fewer, larger uploads. Default 500 (the
        /// collector's default limit is 1,000).
        public var backlogBatchSize: Int = 500
        /// How many uploads may be in flight at once while a backlog waits; otherwise one.
        /// Default 2: the device's work on one batch overlaps the collector's on another.
        public var maximumConcurrentUploads: Int = 2
        /// The most bytes of event names and payloads in one upload (the first event goes
        /// regardless). Default 512 KB, well inside the collector's default limits of 1 MB
        /// compressed and 8 MB inflated.
        public var maximumBatchBytes: Int = 512 * 1024
        /// How many failed uploads a batch is given before it is dropped (and counted in
        /// ``Status/abandoned``); with the default back-off that is about 8 hours online.
        /// Default 100.
        public var maximumAttempts: Int = 100
        /// The queue's file name inside its folder of application support.
        public var databaseName: String = "queue.sqlite"

        /// The defaults.
        public init() {}
    }

    /// What one upload did, for an app's own bookkeeping or a test.
    public struct UploadReport: Sendable {
        /// The batch's idempotency key.
        public var batchKey: String
        /// How many events it carried.
        public var eventCount: Int
        /// The compressed bytes sent.
        public var bodyBytes: Int
        /// The JSON bytes before compression.
        public var uncompressedBytes: Int
        /// `nil` when the collector acknowledged the batch; otherwise why it did not.
        public var failure: RunwayError?
        /// After a failure, how long the log waits before the next upload.
        public var backoff: Duration?
    }

    /// What the queue holds and has done.
    public struct Status: Sendable, Hashable {
        /// Events waiting for a batch.
        public var pending: Int
        /// Events in the batch being uploaded (or to be sent again).
        public var inFlight: Int
        /// Events acknowledged by the collector, ever, on this container.
        public var uploaded: Int
        /// Events dropped because the queue was full, ever, on this container.
        public var dropped: Int
        /// Events the collector refused for good (an event it cannot store, a batch it calls
        /// malformed), ever, on this container.
        public var refused: Int
        /// Events dropped after their batch failed ``Policy/maximumAttempts`` times,
        /// ever, on this container.
        public var abandoned: Int
    }

    private enum Item {
        case event(OperationEvent, CheckedContinuation<Void, any Error>?)
        case barrier(CheckedContinuation<Void, Never>)
    }

    private struct FlushWaiter {
        var id: UInt64
        var through: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var inbox: [Item] = []
        var closed = false
        var flushes: [FlushWaiter] = []
        var nextFlushID: UInt64 = 0
        /// Events up to this sequence number are sent without waiting for a full batch.
        var sendThrough: Int64 = 0
    }

    /// The policy in use.
    public let policy: Policy
    private let engine: Engine
    private let service: ServiceID
    private let logger: Logger
    private let queue: OperationLogQueue
    private let state = Locked(State())
    private let writerBell = Doorbell()
    private let uploaderBell = Doorbell()
    private let onUpload: (@Sendable (UploadReport) -> Void)?
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let completions = Locked<[Completion]>([])
    /// The device's wall clock: event times and each batch's `sent`. Never used for ages.
    private let wallClock: @Sendable () -> Date

    /// Opens the queue in `container` and starts its writer and uploader; events left by an
    /// earlier run are uploaded at once.
    ///
    /// - parameters:
    ///   - engine: Sends the uploads; `service` must be registered with it.
    ///   - service: The collector's service.
    ///   - container: Where the queue lives (application support, excluded from backups).
    ///   - policy: Batch sizes and ages, back-off, capacity and the queue's file.
    ///   - logger: Receives a line for a damaged queue, dropped events and failed uploads.
    ///   - onUpload: Called after each upload, off the main actor.
    /// - throws: ``OperationLogError/storage(reason:)`` when the queue cannot be opened or made.
    public convenience init(
        engine: Engine, service: ServiceID, container: Container, policy: Policy = Policy(),
        logger: Logger = Logger(label: "runway.oplog"), onUpload: (@Sendable (UploadReport) -> Void)? = nil
    ) throws(OperationLogError) {
        try self.init(
            engine: engine, service: service, container: container, policy: policy, logger: logger,
            wallClock: { Date() }, onUpload: onUpload)
    }

    /// As the public initialiser, with the wall clock given (tests move it).
    init(
        engine: Engine, service: ServiceID, container: Container, policy: Policy,
        logger: Logger, wallClock: @escaping @Sendable () -> Date, onUpload: (@Sendable (UploadReport) -> Void)?
    ) throws(OperationLogError) {
        self.wallClock = wallClock
        self.engine = engine
        self.service = service
        self.policy = policy
        self.logger = logger
        self.onUpload = onUpload
        queue = try OperationLogQueue(
            container: container, name: policy.databaseName, capacity: max(policy.capacity, 1),
            logger: logger)
        // Read now, before this run records anything: everything up to here is a leftover.
        let leftovers: Int64
        let notBefore: Int64?
        do {
            leftovers = try queue.highestSequence()
            notBefore = try queue.notBefore()
        } catch {
            throw .storage(reason: "\(error)")
        }
        state.withLock { $0.sendThrough = leftovers }
        let writer = Task.detached { [self] in await runWriter() }
        let uploader = Task.detached { [self] in await runUploader(notBefore: notBefore) }
        var running = [writer, uploader]
        if let network = engine.network {
            // A change of path may make a waiting upload due (back online, or off cellular).
            let changes = network.changes()
            running.append(Task.detached { [uploaderBell] in
                for await _ in changes { uploaderBell.ring() }
            })
        }
        tasks.withLock { $0 = running }
    }

    /// Records an event without waiting: the writer commits it shortly, in one transaction with
    /// whatever else arrived meanwhile. Returns the event's identifier.
    ///
    /// - throws: ``OperationLogError/invalidName(_:)``, ``OperationLogError/unencodablePayload(reason:)``,
    ///   ``OperationLogError/invalidTime(_:)``, ``OperationLogError/eventTooLarge(size:limit:)``, or
    ///   ``OperationLogError/closed``; nothing is queued then.
    @discardableResult
    public func record(_ name: String, payload: JSON = [:], at time: Date? = nil) throws(OperationLogError) -> String {
        let event = try makeEvent(name, payload: payload, time: time ?? wallClock())
        try enqueue(.event(event, nil))
        return event.id
    }

    /// Records an event and returns once it is committed to disk: from then on it survives the
    /// process being killed.
    ///
    /// - throws: As ``record(_:payload:at:)``; ``OperationLogError/storage(reason:)`` when the
    ///   commit failed (the event is not queued).
    @discardableResult
    public func recordCommitted(_ name: String, payload: JSON = [:], at time: Date? = nil) async throws(OperationLogError) -> String {
        let event = try makeEvent(name, payload: payload, time: time ?? wallClock())
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                do {
                    try enqueue(.event(event, continuation))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } catch let error as OperationLogError {
            throw error
        } catch {
            throw .storage(reason: "\(error)")
        }
        return event.id
    }

    /// Uploads every event recorded before the call, in as many batches as needed, and returns
    /// when the collector has acknowledged them all.
    ///
    /// It is the call an app makes as it goes to the background, with seconds to spare: it ends
    /// at once when its task is cancelled, and at `deadline` when one is given — also while the
    /// log waits out a back-off the collector asked for (`Retry-After`). The events stay queued
    /// either way.
    ///
    /// - parameter deadline: How long to wait for the acknowledgement at most; `nil` waits as
    ///   long as it takes.
    /// - throws: ``OperationLogError/uploadFailed(_:)`` when an upload fails (the events stay
    ///   queued and the log retries after its backoff), with ``RunwayError/cancelled`` when the
    ///   task was cancelled and ``RunwayError/timeout`` when `deadline` passed first;
    ///   ``OperationLogError/closed``.
    public func flush(within deadline: Duration? = nil) async throws(OperationLogError) {
        await committedSoFar()
        if let network = engine.network, !network.path.isReachable {
            throw .uploadFailed(.noNetwork(reason: .unreachable))
        }
        if Task.isCancelled { throw .uploadFailed(.cancelled) }
        let highest: Int64
        do {
            highest = try await queue.state().highestSequence
        } catch {
            throw .storage(reason: "\(error)")
        }
        let id = state.withLock { state in
            defer { state.nextFlushID &+= 1 }
            return state.nextFlushID
        }
        // The deadline ends the wait from a task of its own; the flush's task ends it when cancelled.
        let timer = deadline.map { deadline in
            Task { [weak self] in
                try? await Task.sleep(for: deadline)
                if !Task.isCancelled { self?.endFlush(id, with: .uploadFailed(.timeout)) }
            }
        }
        defer { timer?.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let closed = state.withLock { state -> Bool in
                        guard !state.closed else { return true }
                        state.flushes.append(FlushWaiter(id: id, through: highest, continuation: continuation))
                        state.sendThrough = max(state.sendThrough, highest)
                        return false
                    }
                    if closed { continuation.resume(throwing: OperationLogError.closed) }
                    // Cancelled before the waiter was in place: the handler found nothing to end.
                    if Task.isCancelled { endFlush(id, with: .uploadFailed(.cancelled)) }
                    uploaderBell.ring()
                }
            } onCancel: {
                endFlush(id, with: .uploadFailed(.cancelled))
            }
        } catch let error as OperationLogError {
            throw error
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    /// Ends the flush `id` with `error`, unless it has already ended.
    private func endFlush(_ id: UInt64, with error: OperationLogError) {
        let waiter = state.withLock { state -> FlushWaiter? in
            guard let index = state.flushes.firstIndex(where: { $0.id == id }) else { return nil }
            return state.flushes.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// What the queue holds and has done.
    public func status() async throws(OperationLogError) -> Status {
        await committedSoFar()
        do {
            let tally = try await queue.tally()
            return Status(
                pending: tally.pending, inFlight: tally.claimed, uploaded: tally.uploaded, dropped: tally.dropped,
                refused: tally.refused, abandoned: tally.abandoned)
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    /// Commits what was recorded, stops uploading (an upload in flight is cancelled and sent
    /// again at the next launch) and refuses further events.
    public func close() async {
        await committedSoFar()
        let (running, flushes) = state.withLock { state in
            state.closed = true
            defer { state.flushes = [] }
            return (tasks.withLock { $0 }, state.flushes)
        }
        for flush in flushes { flush.continuation.resume(throwing: OperationLogError.closed) }
        for task in running { task.cancel() }
        writerBell.ring()
        uploaderBell.ring()
        for task in running { await task.value }
    }

    // MARK: - Recording

    /// The event, once everything a collector would refuse it for is ruled out here: an event
    /// the collector refuses would hold back every event queued behind it.
    private func makeEvent(_ name: String, payload: JSON, time: Date) throws(OperationLogError) -> OperationEvent {
        guard !name.isEmpty, name.utf8.count <= OperationEvent.maximumNameLength, !name.utf8.contains(0) else {
            throw .invalidName(name)
        }
        let milliseconds = (time.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds >= 0, milliseconds < 0x1p62 else { throw .invalidTime(time) }
        if payload.holdsNULCharacter {
            throw .unencodablePayload(reason: "a string holds a NUL character, which the collector cannot store")
        }
        let encoded: Data
        do {
            encoded = try payload.encoded()
        } catch {
            throw .unencodablePayload(reason: error.reason)
        }
        let size = encoded.count + name.utf8.count
        guard size <= policy.maximumEventSize else {
            throw .eventTooLarge(size: size, limit: policy.maximumEventSize)
        }
        return OperationEvent(
            id: UUID().uuidString.lowercased(), name: name,
            timeMilliseconds: Int64(milliseconds), payload: encoded)
    }

    private func enqueue(_ item: Item) throws(OperationLogError) {
        let wasEmpty = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.inbox.append(item)
            return state.inbox.count == 1
        }
        guard let wasEmpty else { throw .closed }
        if wasEmpty { writerBell.ring() }
    }

    /// Returns once everything recorded before the call is committed (or failed).
    private func committedSoFar() async {
        await withCheckedContinuation { continuation in
            do {
                try enqueue(.barrier(continuation))
            } catch {
                continuation.resume()
            }
        }
    }

    private func runWriter() async {
        var retryDelay: Duration?
        while true {
            let items = state.withLock { state -> [Item] in
                defer { state.inbox = [] }
                return state.inbox
            }
            if items.isEmpty {
                if Task.isCancelled, state.withLock({ $0.closed }) { return }
                await writerBell.wait(timeout: retryDelay)
                continue
            }
            var events: [OperationEvent] = []
            for case .event(let event, _) in items { events.append(event) }
            do {
                if !events.isEmpty {
                    let dropped = try await queue.insert(events)
                    if dropped > 0 {
                        logger.warning(
                            "operation log full: dropped the oldest unsent events",
                            metadata: ["dropped": "\(dropped)", "capacity": "\(policy.capacity)"])
                    }
                }
                retryDelay = nil
                for item in items {
                    switch item {
                    case .event(_, let waiter): waiter?.resume()
                    case .barrier(let waiter): waiter.resume()
                    }
                }
                uploaderBell.ring()
            } catch {
                // Callers who wait learn of it; events recorded without waiting are kept in memory
                // and committed on the next try.
                logger.error(
                    "operation log could not commit events; keeping them for the next try",
                    metadata: ["events": "\(events.count)", "error": "\(error)"])
                var kept: [Item] = []
                for item in items {
                    switch item {
                    case .event(_, let waiter?): waiter.resume(throwing: OperationLogError.storage(reason: "\(error)"))
                    case .event(let event, nil): kept.append(.event(event, nil))
                    case .barrier(let waiter): waiter.resume()
                    }
                }
                state.withLock { $0.inbox.insert(contentsOf: kept, at: 0) }
                retryDelay = .seconds(1)
                if Task.isCancelled { return }
                await writerBell.wait(timeout: retryDelay)
            }
        }
    }

    // MARK: - Uploading

    /// What the uploader carries from one round to the next.
    private struct UploaderState {
        /// Until when (``BootClock`` milliseconds) uploads wait after a failure.
        var notBefore: Int64?
        /// Halved by each 413, doubled back by each success: how many events the collector takes.
        var sizeLimit: Int
        /// The uploads in flight, by batch key.
        var running: [String: Task<Void, Never>] = [:]
    }

    /// An upload that ended, waiting for the uploader to act on its answer.
    private struct Completion: Sendable {
        var batch: OperationLogQueue.Batch
        var report: UploadReport
        var answer: Answer
    }

    private func runUploader(notBefore storedNotBefore: Int64?) async {
        var uploader = UploaderState(
            notBefore: storedNotBefore, sizeLimit: max(policy.backlogBatchSize, policy.batchSize, 1))
        while !Task.isCancelled {
            for completion in completions.withLock({ completions in
                defer { completions = [] }
                return completions
            }) {
                uploader.running[completion.batch.key] = nil
                await settle(completion, &uploader)
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
            resolveFlushes(lowestQueued: queued.lowestSequence)
            let now = BootClock.nowMilliseconds()
            if let notBefore = uploader.notBefore, notBefore > now {
                await uploaderBell.wait(timeout: .milliseconds(notBefore - now))
                continue
            }
            let path = engine.network?.path
            if let path, !path.isReachable {
                // Offline: nothing to try until the path changes (the monitor rings).
                failFlushes(with: .noNetwork(reason: .unreachable))
                await uploaderBell.wait(timeout: nil)
                continue
            }
            let sendThrough = state.withLock { $0.sendThrough }
            let ageLimit = Self.milliseconds(policy.maximumAge)
            let forced = queued.pending > 0 && (queued.lowestSequence ?? .max) <= sendThrough
            let aged = queued.oldestQueued.map { now - $0 >= ageLimit } ?? false
            let waitingBatch = queued.claimedBatches.contains { uploader.running[$0] == nil }
            var due = waitingBatch || queued.pending >= policy.batchSize || forced || aged
            var wakeAt = queued.oldestQueued.map { $0 + ageLimit }
            if due, !forced, path?.isExpensive == true, let deferral = policy.deferOnExpensivePath,
                let oldest = queued.lowestQueuedAt ?? queued.oldestQueued,
                now - oldest < Self.milliseconds(deferral)
            {
                // Work that can wait waits for a cheaper path, up to its limit.
                due = false
                wakeAt = oldest + Self.milliseconds(deferral)
            }
            // A backlog goes in larger batches, several at once: fewer round trips, and the
            // client's work overlaps the collector's. Unless something is due by age or asked
            // for, only whole batches of batchSize go.
            let batchSize = max(policy.batchSize, 1)
            let backlog = queued.pending - batchSize > batchSize  // more than two batches, without overflow
            let concurrent = backlog ? max(policy.maximumConcurrentUploads, 1) : 1
            guard due, uploader.running.count < concurrent else {
                let wait = due ? nil : wakeAt.map { Duration.milliseconds(max($0 - now, 1)) }
                await uploaderBell.wait(timeout: wait)
                continue
            }
            var limit = batchSize
            if backlog {
                let whole = forced || aged ? queued.pending : queued.pending / batchSize * batchSize
                limit = max(min(policy.backlogBatchSize, whole), batchSize)
            }
            limit = min(limit, uploader.sizeLimit)
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

    /// Acts on the answer to one upload: what leaves the queue, what is split, how long to wait.
    private func settle(_ completion: Completion, _ uploader: inout UploaderState) async {
        let (batch, report) = (completion.batch, completion.report)
        do {
            switch completion.answer {
            case .stored(let refused):
                let ceiling = max(policy.backlogBatchSize, policy.batchSize, 1)
                uploader.sizeLimit = uploader.sizeLimit > ceiling / 2 ? ceiling : uploader.sizeLimit * 2
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
                    uploader.sizeLimit = max(min(batch.events.count / 2, stated ?? .max), 1)
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
                    let delay = backoff(afterFailures: attempts, retryAfter: retryAfter)
                    let until = BootClock.nowMilliseconds() + Self.milliseconds(delay)
                    uploader.notBefore = max(uploader.notBefore ?? until, until)
                    try await queue.setNotBefore(uploader.notBefore)
                    reported.backoff = delay
                    logger.warning(
                        "operation log upload failed; events kept",
                        metadata: ["events": "\(batch.events.count)", "error": "\(failure)", "retryIn": "\(delay)"])
                }
                onUpload?(reported)
                failFlushes(with: failure)
            }
        } catch {
            logger.error("operation log could not update its queue", metadata: ["error": "\(error)"])
        }
    }

    /// Sends `batch`; a stored batch is removed from the queue here.
    private func upload(_ batch: OperationLogQueue.Batch) async -> (UploadReport, Answer) {
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
        let (result, retryAfter) = await engine.perform(
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

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Doubling from the base, capped, with the upper half jittered; `Retry-After` wins when
    /// longer.
    private func backoff(afterFailures failures: Int, retryAfter: Duration?) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let doubled = min(policy.baseBackoff * (1 << exponent), policy.maximumBackoff)
        let jittered = doubled / 2 + doubled / 2 * Double.random(in: 0...1)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, .seconds(86_400)))
    }

    private func resolveFlushes(lowestQueued: Int64?) {
        let done = state.withLock { state -> [FlushWaiter] in
            let lowest = lowestQueued ?? .max
            let done = state.flushes.filter { $0.through < lowest }
            state.flushes.removeAll { $0.through < lowest }
            return done
        }
        for flush in done { flush.continuation.resume() }
    }

    private func failFlushes(with error: RunwayError) {
        let failed = state.withLock { state -> [FlushWaiter] in
            defer { state.flushes = [] }
            return state.flushes
        }
        for flush in failed { flush.continuation.resume(throwing: OperationLogError.uploadFailed(error)) }
    }
}
