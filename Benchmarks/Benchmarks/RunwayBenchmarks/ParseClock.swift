import NIOConcurrencyHelpers

/// The time a profile run's loads spent parsing their bodies (``ProfileRun``): timed around the
/// parser for the raw ways, read from the load's own ``PhaseTimings`` for the engine's — the same
/// parser on the same body, so that a difference is what the rest of each process's work leaves
/// the parse to start from (caches, the heap), not the parser.
final class ParseClock: Sendable {
    private let total = NIOLockedValueBox((time: Duration.zero, parses: 0))

    /// Adds one parse's time; `nil` (a load that did not report one) is not counted.
    func add(_ time: Duration?) {
        guard let time else { return }
        total.withLockedValue { total in
            total.time += time
            total.parses += 1
        }
    }

    /// Times `parse` and adds it.
    func time<Value>(_ parse: () throws -> Value) rethrows -> Value {
        let clock = ContinuousClock()
        let started = clock.now
        let value = try parse()
        add(clock.now - started)
        return value
    }

    /// The mean parse in µs, as the run's last line prints it; `nil` when no load parsed.
    var summary: String? {
        let (time, parses) = total.withLockedValue { $0 }
        guard parses > 0 else { return nil }
        let (seconds, attoseconds) = (time / parses).components
        return String(format: "%.2f", Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
    }
}
