import Foundation
import Logging

/// A swift-log backend that keeps every line, so tests can assert what Runway logs.
final class LogCapture: LogHandler, @unchecked Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lock = NSLock()
    private var stored: [Line] = []
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
        lock.lock()
        stored.append(Line(level: event.level, message: "\(event.message)", metadata: flat))
        lock.unlock()
    }
}
