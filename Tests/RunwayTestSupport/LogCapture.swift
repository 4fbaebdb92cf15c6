import Foundation
import Logging

/// A swift-log backend that keeps every line, so tests can assert what Runway logs.
public final class LogCapture: LogHandler, @unchecked Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
        /// Whether it was logged on the main queue, the main actor's executor.
        public var onMainQueue: Bool = false
        /// What ``probe`` said when it was logged.
        public var probed: Bool = false

        public init(level: Logger.Level, message: String, metadata: [String: String], onMainQueue: Bool = false) {
            self.level = level
            self.message = message
            self.metadata = metadata
            self.onMainQueue = onMainQueue
        }
    }

    private let lock = NSLock()
    private var stored: [Line] = []
    private var waiters: [(matches: @Sendable (Line) -> Bool, continuation: CheckedContinuation<Line, Never>)] = []
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace
    /// Asked as each line is logged, on the logging thread (``Line/probed``): whether it runs
    /// where a test expects.
    public let probe: (@Sendable () -> Bool)?

    public init(probe: (@Sendable () -> Bool)? = nil) { self.probe = probe }

    public var lines: [Line] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var flat: [String: String] = [:]
        for (key, value) in event.metadata ?? [:] { flat[key] = "\(value)" }
        var line = Line(level: event.level, message: "\(event.message)", metadata: flat, onMainQueue: MainQueue.isCurrent)
        line.probed = probe?() ?? false
        lock.lock()
        stored.append(line)
        let ready = waiters.filter { $0.matches(line) }
        waiters.removeAll { $0.matches(line) }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume(returning: line) }
    }

    /// Waits for the first line, logged before or after the call, that `matches`.
    public func waitForLine(where matches: @escaping @Sendable (Line) -> Bool) async -> Line {
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
