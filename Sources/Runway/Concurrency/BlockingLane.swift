import Dispatch

/// A serial dispatch queue for blocking steps that must run one after another — a download's
/// writes to its file, an upload's reads of its files — with the caller suspended while each
/// runs: the disk (or an app's sink) waits on a thread of dispatch's, never of Swift's pool
/// (``BlockingWork`` says why that matters).
///
/// A lane costs a queue once and a hop a step, so a transport makes one only for an exchange
/// that may block, never for bytes in memory.
package struct BlockingLane: Sendable {
    /// The lane's queue, for steps handed to it without waiting for each.
    package let queue: DispatchQueue

    /// A lane whose steps run at `priority` (the caller's when `nil`), as ``BlockingWork`` runs.
    package init(priority: TaskPriority? = nil) {
        queue = DispatchQueue(
            label: BlockingWork.label, qos: BlockingWork.qualityOfService(for: priority ?? Task.currentPriority))
        queue.setSpecific(key: BlockingWork.marker, value: true)
    }

    /// Runs `body` after every step handed to the lane before it, and hands back what it
    /// returned or threw.
    package func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            queue.async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
