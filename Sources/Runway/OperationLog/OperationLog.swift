public import Foundation
public import Logging
public import RunwayStorage

/// User operation logs, sent in bursts: events are queued on disk and uploaded in batches of 30
/// by default, so the radio wakes once per batch instead of once per tap.
///
/// ``record(_:payload:at:)`` hands the event to a serial writer and returns at once; the writer
/// commits whatever has arrived in one transaction. An upload starts when a batch is full, when
/// the oldest waiting event reaches ``Policy/maximumAge``, on ``flush(within:)`` (call it when the
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
/// clock the user cannot set (the time since the device booted).
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
    enum Item {
        case event(OperationEvent, CheckedContinuation<Void, any Error>?)
        case barrier(CheckedContinuation<Void, Never>)
    }

    struct FlushWaiter {
        var id: UInt64
        var through: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    struct State {
        var inbox: [Item] = []
        var closed = false
        var flushes: [FlushWaiter] = []
        var nextFlushID: UInt64 = 0
        /// Events up to this sequence number are sent without waiting for a full batch.
        var sendThrough: Int64 = 0
    }

    /// The policy in use.
    public let policy: Policy
    let engine: Engine
    let service: ServiceID
    let logger: Logger
    let queue: OperationLogQueue
    let state = Locked(State())
    let writerBell = Doorbell()
    let uploaderBell = Doorbell()
    let onUpload: (@Sendable (UploadReport) -> Void)?
    let tasks = Locked<[Task<Void, Never>]>([])
    let completions = Locked<[Completion]>([])
    /// The device's wall clock: event times and each batch's `sent`. Never used for ages.
    let wallClock: @Sendable () -> Date

    /// Opens the queue in `container` and starts its writer and uploader; events left by an
    /// earlier run are uploaded at once.
    ///
    /// Opening the queue's SQLite file is disk work done here, on the caller's thread: from the
    /// main actor (an app's launch code), use
    /// ``open(engine:service:container:policy:logger:onUpload:)``.
    ///
    /// - parameters:
    ///   - engine: Sends the uploads; `service` must be registered with it.
    ///   - service: The collector's service.
    ///   - container: Where the queue lives (application support, excluded from backups).
    ///   - policy: Batch sizes and ages, back-off, capacity and the queue's file.
    ///   - logger: Receives a line for a damaged queue, dropped events and failed uploads.
    ///   - onUpload: Called after each upload, off the main actor. When it reports a failure,
    ///     the flushes that waited on that upload have already ended with it: a flush started
    ///     then waits for the next upload.
    /// - throws: ``OperationLogError/storage(reason:)`` when the queue cannot be opened or made.
    public convenience init(
        engine: Engine, service: ServiceID, container: Container, policy: Policy = Policy(),
        logger: Logger = Logger(label: "runway.oplog"), onUpload: (@Sendable (UploadReport) -> Void)? = nil
    ) throws(OperationLogError) {
        try self.init(
            engine: engine, service: service, container: container, policy: policy, logger: logger,
            wallClock: { Date() }, onUpload: onUpload)
    }

    /// As the public initialiser, with the wall clock given (tests move it). `package`, so that
    /// the test support library needs no `@testable import` and builds in release (`runway
    /// bench` links it).
    package init(
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
        if let watch = uploaderBell.ringOnPathChanges(of: engine) { running.append(watch) }
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
                refused: tally.refused, abandoned: tally.abandoned, unreadable: tally.unreadable)
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
}
