import Foundation
import HTTPTypes

extension Engine {
    /// The load of an API no cache answers, sharing its request with identical loads in flight
    /// (``FlightKey``): the first sends it, the others wait for its outcome; when the first
    /// leaves, a load still waiting sends it again (``CallCoalescer/lead(_:cancellation:onJoin:_:)``).
    func performSharedLoad<Endpoint: API>(
        _ api: Endpoint, flight: CallCoalescer.Identity, registered: RegisteredService, params: Parameters, loadID: LoadID,
        cancellation: LoadCancellation?, trace: LoadTrace?, started: ContinuousClock.Instant,
        land: (TransportResponse, HTTPRequest, Int) -> Result<RawResponse, RunwayError>
    ) async -> (result: Result<RawResponse, RunwayError>, attempts: Attempts) {
        let (result, attempts) = await shareFlight(flight, api: api, cancellation: cancellation) { [self] in
            let (result, attempts) = await runAttempts(
                api, params: params, registered: registered, cancellation: cancellation, loadID: loadID, trace: trace,
                land: land)
            return (CallCoalescer.Outcome(result: result, answer: attempts.answer), attempts)
        }
        if attempts.joined { trace?.set("runway.coalesced", true) }
        log(loadID, api, service: registered.service.id, result, attempts, started: started, joined: attempts.joined)
        return (result, attempts)
    }

    /// Runs `operation` once among the identical loads in flight as `flight` (``CallCoalescer``),
    /// in this load's task when it is the first, and hands back its outcome with the attempts
    /// this load counts: its own when it ran `operation`, none but the answer's head, marked
    /// joined, when it joined another's.
    ///
    /// `operation` must end when `cancellation` fires or the task is cancelled: the call's other
    /// loads then send their own.
    func shareFlight(
        _ flight: CallCoalescer.Identity, api: some API, cancellation: LoadCancellation?,
        _ operation: () async -> (CallCoalescer.Outcome, Attempts)
    ) async -> (Result<RawResponse, RunwayError>, Attempts) {
        let metrics = self.metrics
        let apiName = api.name
        var own: Attempts?
        let (outcome, led) = await coalescer.lead(
            flight, cancellation: cancellation, onJoin: { metrics?.coalesced(api: apiName) }
        ) {
            let (outcome, attempts) = await operation()
            own = attempts
            return outcome
        }
        var attempts = led ? own ?? Attempts() : Attempts()
        attempts.joined = !led
        attempts.answer = outcome.answer
        return (outcome.result, attempts)
    }
}
