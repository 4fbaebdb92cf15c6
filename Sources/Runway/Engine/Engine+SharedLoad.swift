import Foundation
import HTTPTypes

extension Engine {
    /// The load of an API no cache answers, sharing its request with identical loads in flight
    /// (``FlightKey``): the first sends it, the others wait for its outcome, and a caller that
    /// leaves cancels it only when nobody else waits.
    func performSharedLoad<Endpoint: API>(
        _ api: Endpoint, flight: FlightKey, registered: RegisteredService, params: Parameters, loadID: LoadID,
        cancellation: LoadCancellation?, trace: LoadTrace?, started: ContinuousClock.Instant,
        land: @escaping @Sendable (TransportResponse, HTTPRequest, Int) -> Result<RawResponse, RunwayError>
    ) async -> (result: Result<RawResponse, RunwayError>, attempts: Attempts) {
        let (result, attempts) = await shareFlight(flight.hash, api: api, cancellation: cancellation) { [self] seen in
            let (result, attempts) = await runAttempts(
                api, params: params, registered: registered, loadID: loadID, trace: trace, land: land)
            seen(attempts)
            return CallCoalescer.Outcome(result: result, answer: attempts.answer)
        }
        if attempts.joined { trace?.set("runway.coalesced", true) }
        log(loadID, api, service: registered.service.id, result, attempts, started: started, joined: attempts.joined)
        return (result, attempts)
    }

    /// Runs `operation` once among the identical loads in flight under `key` (``CallCoalescer``)
    /// and hands back its outcome with the attempts this load counts: the flight's, marked
    /// joined when this load joined another's. `operation` reports its attempts through `seen`;
    /// the head of the flight's last answer reaches every load that shared it.
    func shareFlight(
        _ key: String, api: some API, cancellation: LoadCancellation?,
        _ operation: @escaping @Sendable (_ seen: @escaping @Sendable (Attempts) -> Void) async -> CallCoalescer.Outcome
    ) async -> (Result<RawResponse, RunwayError>, Attempts) {
        let attemptsSeen = Locked(Attempts())
        let metrics = self.metrics
        let apiName = api.name
        // The shared call runs in the coalescer's task: this load's handle only makes it leave.
        let outcome = await coalescer.run(
            key, cancellation: cancellation,
            onJoin: {
                attemptsSeen.withLock { $0.joined = true }
                metrics?.coalesced(api: apiName)
            }
        ) {
            await operation { attempts in
                attemptsSeen.withLock { seen in
                    let joined = seen.joined
                    seen = attempts
                    seen.joined = joined
                }
            }
        }
        var attempts = attemptsSeen.withLock { $0 }
        attempts.answer = outcome.answer
        return (outcome.result, attempts)
    }
}
