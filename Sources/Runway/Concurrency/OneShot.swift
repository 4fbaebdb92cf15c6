/// A value delivered once and awaited by one caller: how an `async` load waits for the same
/// delivery a delegate would get.
///
/// The first ``resolve(_:)`` wins; later ones are ignored, which is what makes a cancellation
/// racing a landing harmless.
final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case pending([CheckedContinuation<Value, Never>])
        case resolved(Value)
    }

    private let state = Locked<State>(.pending([]))

    /// Delivers `value` unless a value was delivered already.
    ///
    /// - returns: Whether this call delivered it.
    @discardableResult
    func resolve(_ value: Value) -> Bool {
        let waiting = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard case .pending(let continuations) = state else { return nil }
            state = .resolved(value)
            return continuations
        }
        guard let waiting else { return false }
        for continuation in waiting { continuation.resume(returning: value) }
        return true
    }

    /// Whether a value has been delivered.
    var isResolved: Bool {
        state.withLock { state in
            if case .resolved = state { return true }
            return false
        }
    }

    /// The delivered value, waiting for it if need be.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): a manager waiting on the
    /// main actor is resumed there directly, without a hop to the global executor and back.
    nonisolated(nonsending) func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                switch state {
                case .resolved(let value): return value
                case .pending(let continuations):
                    state = .pending(continuations + [continuation])
                    return nil
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
