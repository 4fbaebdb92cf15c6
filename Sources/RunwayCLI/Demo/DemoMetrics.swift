import CoreMetrics
import Foundation
import NIOConcurrencyHelpers

/// An in-memory swift-metrics backend for `runway demo --metrics`: keeps each counter's total
/// and each timer's count and sum, and prints them as a table.
final class DemoMetrics: MetricsFactory, Sendable {
    private final class Handler: CounterHandler, RecorderHandler, TimerHandler, Sendable {
        private let values = NIOLockedValueBox((count: Int64(0), sum: Int64(0)))
        func increment(by amount: Int64) { values.withLockedValue { $0.sum += amount; $0.count += 1 } }
        func reset() { values.withLockedValue { $0 = (0, 0) } }
        func record(_ value: Int64) { increment(by: value) }
        func record(_ value: Double) { increment(by: Int64(value)) }
        func recordNanoseconds(_ duration: Int64) { increment(by: duration) }
        var snapshot: (count: Int64, sum: Int64) { values.withLockedValue { $0 } }
    }

    private let handlers = NIOLockedValueBox<[(label: String, dimensions: [(String, String)], kind: String, handler: Handler)]>([])

    private func make(_ label: String, _ dimensions: [(String, String)], _ kind: String) -> Handler {
        handlers.withLockedValue { handlers in
            if let found = handlers.first(where: { $0.label == label && $0.dimensions.elementsEqual(dimensions, by: ==) }) {
                return found.handler
            }
            let handler = Handler()
            handlers.append((label, dimensions, kind, handler))
            return handler
        }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { make(label, dimensions, "counter") }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        make(label, dimensions, "recorder")
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { make(label, dimensions, "timer") }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    /// One line per metric: its label, dimensions and value (timers: count and mean).
    func report() -> [String] {
        handlers.withLockedValue { $0 }.sorted { ($0.label, "\($0.dimensions)") < ($1.label, "\($1.dimensions)") }.map { entry in
            let dimensions = entry.dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            let (count, sum) = entry.handler.snapshot
            let value =
                entry.kind == "timer"
                ? "\(count) × mean \(String(format: "%.1f", count == 0 ? 0 : Double(sum) / Double(count) / 1e6)) ms"
                : "\(sum)"
            return "  \(entry.label) {\(dimensions)} \(value)"
        }
    }
}
