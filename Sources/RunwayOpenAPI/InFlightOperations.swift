import Runway

/// The load in flight of each `operationID` whose policy says `cancelInFlight`: a new call
/// cancels it and takes its place. (`ignoreNewWhileLoading` joins through the engine's
/// coalescer instead.)
final class InFlightOperations: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<CallCoalescer.Outcome, Never>
    }

    private struct State {
        var next: UInt64 = 0
        var byOperation: [String: Flight] = [:]
    }

    private let state = Locked(State())

    /// Cancels the load of `operationID` in flight, if any, and runs `load` in its place; the
    /// caller's cancellation cancels `load`.
    func replacing(
        _ operationID: String, with load: @escaping @Sendable () async -> CallCoalescer.Outcome
    ) async -> CallCoalescer.Outcome {
        let (flight, earlier) = state.withLock { state -> (Flight, Flight?) in
            state.next &+= 1
            let flight = Flight(id: state.next, task: Task { await load() })
            return (flight, state.byOperation.updateValue(flight, forKey: operationID))
        }
        earlier?.task.cancel()
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
}
