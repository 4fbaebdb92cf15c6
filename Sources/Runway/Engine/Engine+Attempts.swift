import Foundation
import HTTPTypes
import Tracing

extension Engine {
    /// Every attempt of one call over the network: build, apply the credential, sign, send,
    /// follow redirects, land, sign again once after the signer corrected its clock, renew an
    /// expired credential once, and retry what the API's policy retries — all within the API's
    /// deadlines.
    ///
    /// - parameters:
    ///   - loadID: The load the exchanges belong to, for the recorder.
    ///   - trace: The load's span: each attempt is a child span of it.
    ///   - land: Turns the final answer of an attempt into the load's outcome.
    func runAttempts<Value: Sendable>(
        _ api: some API, params: Parameters, body: RequestBody? = nil, registered: RegisteredService,
        hooks: TransferHooks = TransferHooks(), cancellation: LoadCancellation? = nil, loadID: LoadID? = nil,
        trace loadTrace: LoadTrace? = nil,
        land: (TransportResponse, HTTPRequest, Int) -> Result<Value, RunwayError>
    ) async -> (Result<Value, RunwayError>, Attempts) {
        let clock = ContinuousClock()
        let loadDeadline = api.totalTimeout.map { clock.now + $0 }
        let authentication = api.authenticates ? registered.service.credentials.authentication : nil
        var credential: CredentialLease?
        /// The sign-in the load's request is made for: taken with its first credential, and
        /// compared with the current one before the request is sent again.
        var epoch: SignInEpoch? = hooks.signIn
        var state = RetryState()
        var bodyDigest: String?
        var seen = Attempts()
        while true {
            let attempt = state.begin()
            seen.count = attempt
            seen.answer = nil
            var attemptDeadline = clock.now + api.timeout
            if let loadDeadline, loadDeadline < attemptDeadline { attemptDeadline = loadDeadline }
            var retryAfter: Duration?
            let outcome: Result<Value, RunwayError>
            let trace = loadTrace?.child("attempt \(attempt)")
            trace?.set("runway.attempt", Int64(attempt))
            do throws(RunwayError) {
                // Sent again (a retry, a renewal, a corrected clock, the handler's retry) only
                // for the user it was made for.
                if let epoch, let authentication, authentication.epoch != epoch { throw RunwayError.userChanged }
                var attemptParams = params
                let adapters = Self.adapters(of: api, service: registered.service)
                if !adapters.isEmpty {
                    try await adapters.adaptParams(
                        &attemptParams,
                        context: AdaptingContext(apiName: api.name, service: registered.service.id, attempt: attempt, hop: 0))
                }
                var built = try RequestBuilder.build(
                    api: api, service: registered.service, base: registered.baseURL.get(), params: attemptParams, body: body)
                try await hooks.prepare?(&built)
                if let authentication, credential == nil {
                    let lease = try await authentication.lease()
                    if let epoch, lease.epoch != epoch { throw RunwayError.userChanged }
                    epoch = lease.epoch
                    credential = lease
                }
                if cancellation?.isCancelled == true { throw RunwayError.cancelled }
                // A body that streams from files is hashed once, for the signer, not per attempt.
                if registered.service.credentials.signer != nil, bodyDigest == nil, let content = built.body,
                    content.data == nil
                {
                    // Its files read as blocking work, never on a thread of Swift's pool.
                    let logger = logger
                    bodyDigest = try await BlockingWork.run { () throws(RunwayError) in
                        let digest = try content.sha256Hex()
                        logger.debug("runway signing: the body's files are hashed", metadata: ["bytes": "\(content.length)"])
                        return digest
                    }
                }
                let exchanged = try await exchange(
                    built, api: api, registered: registered, attempt: attempt, deadline: attemptDeadline,
                    credential: credential, epoch: epoch, bodyDigest: bodyDigest, hooks: hooks, cancellation: cancellation,
                    loadID: loadID, trace: trace, seen: &seen)
                retryAfter = Landing.retryAfter(in: exchanged.response.head)
                seen.retryAfter = retryAfter
                seen.answer = exchanged.response.head
                // Refused for the device's clock: the signer corrects it and the request is signed
                // again, once per load. Not a retry of the API's policy, and never the
                // authenticator's business: a second such refusal lands as the answer it is.
                let refusedForClock =
                    exchanged.carriedCredential
                    && registered.service.credentials.signer?.correctsClock(
                        after: exchanged.response.head, body: exchanged.response.body) == true
                if refusedForClock, state.takeClockCorrection() {
                    trace?.set("runway.attempt.outcome", "clock corrected")
                    trace?.end()
                    continue
                }
                if !refusedForClock, let authentication, let used = credential, exchanged.carriedCredential,
                    authentication.isAuthenticationFailure(exchanged.response.head)
                {
                    // Refused with the credential of a user who has since signed out: the request
                    // is theirs, and is not sent again with the next user's credential.
                    guard authentication.epoch == used.epoch else { throw RunwayError.userChanged }
                    guard state.mayRenewCredential else {
                        throw RunwayError.unauthenticated(
                            reason: "the server refused the refreshed credential (HTTP \(exchanged.response.head.status.code))")
                    }
                    // Sent again at once with a newer credential: renewed by this load or by
                    // another that met the expiry first. Not a retry of the API's policy.
                    // Under a span of its own, which the token request's load continues.
                    if let refresh = loadTrace?.child("credential refresh") {
                        let generation = used.generation
                        let renewed: Result<CredentialLease, RunwayError> = await ServiceContext.withValue(refresh.parent.context) {
                            do throws(RunwayError) { return .success(try await authentication.renew(after: generation)) } catch {
                                return .failure(error)
                            }
                        }
                        if case .failure(let error) = renewed { refresh.fail(error) }
                        refresh.end()
                        credential = try renewed.get()
                    } else {
                        credential = try await authentication.renew(after: used.generation)
                    }
                    if credential?.epoch != used.epoch { throw RunwayError.userChanged }
                    state.recordRenewal()
                    trace?.set("runway.attempt.outcome", "credential refused")
                    trace?.end()
                    continue
                }
                outcome = land(exchanged.response, exchanged.request, attempt)
            } catch {
                if error == .userChanged {
                    trace?.fail(error)
                    trace?.end()
                    return (.failure(error), seen)
                }
                outcome = .failure(error)
            }
            if case .failure(let error) = outcome { trace?.fail(error) }
            trace?.end()
            // The service's common errors, decided once for all its APIs.
            if case .failure(let error) = outcome, let handler = registered.service.errorHandler, error != .cancelled,
                !cancellation.isCancelledOrTask
            {
                let context = ServiceErrorContext(apiName: api.name, service: registered.service.id, attempt: attempt)
                switch await handler.handle(error, context: context) {
                case .deliver:
                    break
                case .fail(let replacement):
                    return (.failure(replacement), seen)
                case .retryOnce:
                    if state.takeHandlerRetry() { continue }
                }
            }
            guard case .failure(let error) = outcome, !cancellation.isCancelledOrTask else { return (outcome, seen) }
            var generator = SystemRandomNumberGenerator()
            let step = state.next(
                after: error, policy: api.retryPolicy, method: api.method, retryAfter: retryAfter, now: clock.now,
                loadDeadline: loadDeadline, reachable: network?.path.isReachable ?? true, pathWentAway: seen.pathWentAway,
                using: &generator)
            switch step {
            case .deliver:
                return (outcome, seen)
            case .waitForNetwork(let limit):
                // The network went away in flight: the attempt goes again as soon as it is back.
                seen.pathWentAway = false
                guard let network, await waitForReturn(of: network, atMost: limit, cancellation: cancellation) else {
                    return (cancellation.isCancelledOrTask ? .failure(.cancelled) : outcome, seen)
                }
            case .retry(let delay):
                do {
                    let sleep = self.sleep
                    if let cancellation { try await cancellation.run { try await sleep(delay) } } else { try await sleep(delay) }
                } catch {
                    return (.failure(.cancelled), seen)
                }
            }
        }
    }

    /// Waits until `network` is reachable again, for at most `limit` (on the engine's sleep) or
    /// until the load is cancelled.
    ///
    /// - returns: Whether the network is back.
    private func waitForReturn(of network: NetworkMonitor, atMost limit: Duration, cancellation: LoadCancellation?) async -> Bool {
        let sleep = self.sleep
        let wait: @Sendable () async -> Bool = {
            await network.wait(until: \.isReachable) { try? await sleep(limit) }
        }
        guard let cancellation else { return await wait() }
        let back = (try? await cancellation.run(wait)) ?? false
        return back && !cancellation.isCancelled
    }
}
