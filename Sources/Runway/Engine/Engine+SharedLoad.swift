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
    ) async -> (result: Result<RawResponse, RunwayError>, retryAfter: Duration?) {
        let attemptsSeen = Locked(Attempts())
        let metrics = self.metrics
        let apiName = api.name
        let result = await coalescer.run(
            flight.hash, cancellation: cancellation,
            onJoin: {
                attemptsSeen.withLock { $0.joined = true }
                metrics?.coalesced(api: apiName)
            }
        ) { [self] in
            let (result, attempts) = await runAttempts(
                api, params: params, registered: registered, loadID: loadID, trace: trace, land: land)
            attemptsSeen.withLock { seen in
                let joined = seen.joined
                seen = attempts
                seen.joined = joined
            }
            return result
        }
        let attempts = attemptsSeen.withLock { $0 }
        if attempts.joined { trace?.set("runway.coalesced", true) }
        log(loadID, api, service: registered.service.id, result, attempts, started: started, joined: attempts.joined)
        return (result, attempts.retryAfter)
    }
}
