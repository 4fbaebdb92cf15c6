import Foundation
import Logging

/// A swift-log backend that keeps every line, so tests can assert what Runway logs.
final class LogCapture: LogHandler, @unchecked Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
        /// Whether it was logged on the main queue, the main actor's executor.
        var onMainQueue: Bool = false
    }

    private let lock = NSLock()
    private var stored: [Line] = []
    private var waiters: [(matches: @Sendable (Line) -> Bool, continuation: CheckedContinuation<Line, Never>)] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [Line] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var flat: [String: String] = [:]
        for (key, value) in event.metadata ?? [:] { flat[key] = "\(value)" }
        let line = Line(level: event.level, message: "\(event.message)", metadata: flat, onMainQueue: MainQueue.isCurrent)
        lock.lock()
        stored.append(line)
        let ready = waiters.filter { $0.matches(line) }
        waiters.removeAll { $0.matches(line) }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume(returning: line) }
    }

    /// Waits for the first line, logged before or after the call, that `matches`.
    func waitForLine(where matches: @escaping @Sendable (Line) -> Bool) async -> Line {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let line = stored.first(where: matches) {
                lock.unlock()
                continuation.resume(returning: line)
                return
            }
            waiters.append((matches, continuation))
            lock.unlock()
        }
    }
}
