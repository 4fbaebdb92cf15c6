import Runway

/// The loads in flight by `operationID`, for the request strategies that look at them: one
/// that cancels the earlier load, one that hands the new caller the earlier one's outcome.
package final class InFlightOperations: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<OperationOutcome, Never>
    }

    private struct State {
        var next: UInt64 = 0
        var byOperation: [String: Flight] = [:]
    }

    private let state = Locked(State())
    /// Told each time a call joins one in flight, with its `operationID` (tests wait on it).
    package let joined = Locked<(@Sendable (String) -> Void)?>(nil)

    /// Cancels the load of `operationID` in flight, if any, and runs `load` in its place.
    func replacing(_ operationID: String, with load: @escaping @Sendable () async -> OperationOutcome) async -> OperationOutcome {
        let (flight, earlier) = state.withLock { state -> (Flight, Flight?) in
            state.next &+= 1
            let flight = Flight(id: state.next, task: Task { await load() })
            return (flight, state.byOperation.updateValue(flight, forKey: operationID))
        }
        earlier?.task.cancel()
        return await finish(flight, of: operationID)
    }

    /// Hands back the outcome of the load of `operationID` in flight, or runs `load` when none is.
    /// A caller that joined and is cancelled stops waiting at once; the load goes on for the
    /// caller that started it.
    func joining(_ operationID: String, or load: @escaping @Sendable () async -> OperationOutcome) async -> OperationOutcome {
        let (flight, started) = state.withLock { state -> (Flight, Bool) in
            if let running = state.byOperation[operationID] { return (running, false) }
            state.next &+= 1
            let flight = Flight(id: state.next, task: Task { await load() })
            state.byOperation[operationID] = flight
            return (flight, true)
        }
        guard started else {
            joined.withLock { $0 }?(operationID)
            return await Self.waitLeavingOnCancel(for: flight.task)
        }
        return await finish(flight, of: operationID)
    }

    /// Waits for `flight` (its caller's cancellation cancels it) and forgets it.
    private func finish(_ flight: Flight, of operationID: String) async -> OperationOutcome {
        let outcome = await withTaskCancellationHandler {
            await flight.task.value
        } onCancel: {
            flight.task.cancel()
        }
        state.withLock { state in
            if state.byOperation[operationID]?.id == flight.id { state.byOperation[operationID] = nil }
        }
        return outcome
    }

    /// The outcome of `task`, or `RunwayError/cancelled` as soon as the waiting task is
    /// cancelled (`task` goes on).
    private static func waitLeavingOnCancel(for task: Task<OperationOutcome, Never>) async -> OperationOutcome {
        let cancelled = OperationOutcome(result: .failure(.cancelled))
        let waiter = Locked<(continuation: CheckedContinuation<OperationOutcome, Never>?, left: Bool)>((nil, false))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let left = waiter.withLock { waiter -> Bool in
                    if !waiter.left { waiter.continuation = continuation }
                    return waiter.left
                }
                if left { return continuation.resume(returning: cancelled) }
                Task {
                    let outcome = await task.value
                    waiter.withLock { waiter in
                        defer { waiter.continuation = nil }
                        return waiter.continuation
                    }?.resume(returning: outcome)
                }
            }
        } onCancel: {
            waiter.withLock { waiter in
                waiter.left = true
                defer { waiter.continuation = nil }
                return waiter.continuation
            }?.resume(returning: cancelled)
        }
    }
}
