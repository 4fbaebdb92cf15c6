import Dispatch

/// Whether code runs on the main queue, the main actor's executor. Under `swift test` on Linux
/// that queue is not always drained by the main thread, so `Thread.isMainThread` says nothing
/// about the main actor; a key set on the queue is found only by work running on it.
public enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs on the main queue.
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
