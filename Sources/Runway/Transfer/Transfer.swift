/// An upload or download in flight: its progress as it happens, and its outcome.
///
/// The transfer starts when it is made. Awaiting ``value`` from a task that is then cancelled
/// cancels the transfer, as does ``cancel()``.
///
/// For example:
///
/// ```swift
/// let download = engine.download(FloorPlanAPI(), to: .caches("plans/1204.pdf", in: container))
/// Task { for await progress in download.progress { bar.progress = progress.fractionCompleted ?? 0 } }
/// let file = try await download.value
/// ```
public struct Transfer<Value: Sendable>: Sendable {
    /// Bytes done so far, reported as they move and finished when the transfer ends. A slow
    /// reader sees the latest figure, not every one. A retried attempt starts again from what it
    /// sends again (an upload from zero, a resumed download from the bytes already on disk).
    public let progress: AsyncStream<TransferProgress>
    /// The transfer's load: in the engine's log, in what interceptors see, and what
    /// ``APIManager/cancel(_:)`` takes for a manager's transfer.
    public let loadID: LoadID
    private let task: Task<Result<Value, RunwayError>, Never>

    init(loadID: LoadID, progress: AsyncStream<TransferProgress>, task: Task<Result<Value, RunwayError>, Never>) {
        self.loadID = loadID
        self.progress = progress
        self.task = task
    }

    /// The outcome, once the transfer has ended.
    public var value: Value {
        get async throws(RunwayError) {
            let task = self.task
            return try await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }.get()
        }
    }

    /// Cancels the transfer on the wire; ``value`` then throws ``RunwayError/cancelled``.
    public func cancel() { task.cancel() }
}

/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes sent (upload) or on disk (download) so far.
    public var completed: Int64
    /// All bytes there are to move, when known.
    public var total: Int64?

    /// Creates a progress figure.
    public init(completed: Int64, total: Int64?) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total` in 0…1, when the total is known.
    public var fractionCompleted: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }
}
