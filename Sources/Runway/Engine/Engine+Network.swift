import Foundation
import HTTPTypes
import Logging
import Tracing

/// What the attempts of one load saw, for its log line.
struct Attempts: Sendable {
    var count = 0
    /// The last request sent: the last hop of the last attempt.
    var request: HTTPRequest?
    var status: Int?
    var bytes = 0
    var httpVersion: String?
    /// The wait the last answer's `Retry-After` asked for.
    var retryAfter: Duration?
    /// The address the last request was sent to, when an endpoint selector chose it.
    var address: String?
    /// Whether the last attempt was sent and then ended because the device's network went
    /// away (rather than a load that found no network before it sent anything).
    var pathWentAway = false
    /// Whether the load joined an identical one in flight instead of sending its own.
    var joined = false
}

/// What a transfer adds to the exchanges of a load: progress of the body sent, where the
/// response body goes, and a last change to each attempt's request (a download's `Range`).
struct TransferHooks: Sendable {
    var uploadProgress: (@Sendable (Int64, Int64) -> Void)?
    var sink: (any ResponseSink)?
    var prepare: (@Sendable (inout PreparedRequest) throws(RunwayError) -> Void)?
}

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
    func network<Value: Sendable>(
        _ api: some API, params: Parameters, body: RequestBody? = nil, registered: RegisteredService,
        hooks: TransferHooks = TransferHooks(), cancellation: LoadCancellation? = nil, loadID: LoadID? = nil,
        trace loadTrace: LoadTrace? = nil,
        land: (TransportResponse, HTTPRequest, Int) -> Result<Value, RunwayError>
    ) async -> (Result<Value, RunwayError>, Attempts) {
        let service = registered.service
        let clock = ContinuousClock()
        let loadDeadline = api.totalTimeout.map { clock.now + $0 }
        let authentication = api.authenticates ? service.credentials.authentication : nil
        var credential: CredentialLease?
        var renewals = 0
        var clockCorrections = 0
        var handlerRetries = 0
        var bodyDigest: String?
        var seen = Attempts()
        while true {
            seen.count += 1
            let attempt = seen.count
            var attemptDeadline = clock.now + api.timeout
            if let loadDeadline, loadDeadline < attemptDeadline { attemptDeadline = loadDeadline }
            var retryAfter: Duration?
            let outcome: Result<Value, RunwayError>
            let trace = loadTrace?.child("attempt \(attempt)")
            trace?.set("runway.attempt", Int64(attempt))
            do throws(RunwayError) {
                var attemptParams = params
                let adapters = Self.adapters(of: api, service: service)
                if !adapters.isEmpty {
                    try await adapters.adaptParams(
                        &attemptParams, context: AdaptingContext(apiName: api.name, service: service.id, attempt: attempt, hop: 0))
                }
                var built = try RequestBuilder.build(
                    api: api, service: service, base: registered.baseURL.get(), params: attemptParams, body: body)
                try hooks.prepare?(&built)
                if let authentication, credential == nil { credential = try await authentication.lease() }
                if cancellation?.isCancelled == true { throw RunwayError.cancelled }
                // A body that streams from files is hashed once, for the signer, not per attempt.
                if service.credentials.signer != nil, bodyDigest == nil, let content = built.body, content.data == nil {
                    bodyDigest = try content.sha256Hex()
                }
                let exchanged = try await exchange(
                    built, api: api, registered: registered, attempt: attempt, deadline: attemptDeadline,
                    credential: credential, bodyDigest: bodyDigest, hooks: hooks, cancellation: cancellation,
                    loadID: loadID, trace: trace, seen: &seen)
                retryAfter = Landing.retryAfter(in: exchanged.response.head)
                seen.retryAfter = retryAfter
                // Refused for the device's clock: the signer corrects it and the request is signed
                // again, once per load. Not a retry of the API's policy, and never the
                // authenticator's business: a second such refusal lands as the answer it is.
                let refusedForClock =
                    exchanged.carriedCredential
                    && service.credentials.signer?.correctsClock(after: exchanged.response.head, body: exchanged.response.body) == true
                if refusedForClock, clockCorrections == 0 {
                    clockCorrections += 1
                    trace?.set("runway.attempt.outcome", "clock corrected")
                    trace?.end()
                    continue
                }
                if !refusedForClock, let authentication, let used = credential, exchanged.carriedCredential,
                    authentication.isAuthenticationFailure(exchanged.response.head)
                {
                    guard renewals == 0 else {
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
                    renewals += 1
                    trace?.set("runway.attempt.outcome", "credential refused")
                    trace?.end()
                    continue
                }
                outcome = land(exchanged.response, exchanged.request, attempt)
            } catch {
                outcome = .failure(error)
            }
            if case .failure(let error) = outcome { trace?.fail(error) }
            trace?.end()
            // The service's common errors, decided once for all its APIs.
            if case .failure(let error) = outcome, let handler = service.errorHandler, error != .cancelled,
                !cancellation.isCancelledOrTask
            {
                let context = ServiceErrorContext(apiName: api.name, service: service.id, attempt: attempt)
                switch await handler.handle(error, context: context) {
                case .deliver:
                    break
                case .fail(let replacement):
                    return (.failure(replacement), seen)
                case .retryOnce where handlerRetries == 0:
                    handlerRetries += 1
                    continue
                case .retryOnce:
                    break
                }
            }
            let policyAttempt = attempt - renewals - clockCorrections - handlerRetries
            if case .failure(let error) = outcome, !cancellation.isCancelledOrTask,
                api.retryPolicy.shouldRetry(after: error, method: api.method, attempt: policyAttempt)
            {
                let delay = api.retryPolicy.delay(afterAttempt: policyAttempt, retryAfter: retryAfter)
                if let loadDeadline, clock.now + delay >= loadDeadline { return (outcome, seen) }
                if let network, !network.path.isReachable {
                    // A load that found no network fails now. One whose network went away in
                    // flight gets the policy's wait for it to come back (a Wi-Fi handover, a
                    // tunnel), and goes again as soon as it does.
                    guard seen.pathWentAway else { return (outcome, seen) }
                    seen.pathWentAway = false
                    guard await waitForReturn(of: network, atMost: delay, cancellation: cancellation) else {
                        return (cancellation.isCancelledOrTask ? .failure(.cancelled) : outcome, seen)
                    }
                    continue
                }
                do {
                    let sleep = self.sleep
                    if let cancellation { try await cancellation.run { try await sleep(delay) } } else { try await sleep(delay) }
                    continue
                } catch {
                    return (.failure(.cancelled), seen)
                }
            }
            return (outcome, seen)
        }
    }

    /// The final answer of one attempt, the request that got it, and whether that request
    /// carried the service's credential (a hop to another origin does not).
    struct Exchanged {
        var response: TransportResponse
        var request: HTTPRequest
        var carriedCredential: Bool
    }

    /// One attempt's exchange: the first request and every redirect hop the API's policy
    /// follows, each checked against the service's rules, given the credential and signed while
    /// it stays on the service's origin, and sent within `deadline` — to the next fastest address
    /// when the chosen one fails before anything was sent.
    func exchange(
        _ built: PreparedRequest, api: some API, registered: RegisteredService, attempt: Int,
        deadline: ContinuousClock.Instant, credential: CredentialLease? = nil, bodyDigest: String? = nil,
        hooks: TransferHooks = TransferHooks(), cancellation: LoadCancellation? = nil, loadID: LoadID? = nil,
        trace: LoadTrace? = nil, seen: inout Attempts
    ) async throws(RunwayError) -> Exchanged {
        let service = registered.service
        var target = built
        var withCredentials = true
        var hops = 0
        /// Addresses given up on within this attempt, each for a failure before anything was sent.
        var failovers = 0
        /// The fields the authenticator set: redacted, with the usual ones, from what app code sees.
        var credentialNames = Set<HTTPField.Name>()
        let adapters = Self.adapters(of: api, service: service)
        while true {
            var request = target
            // A span per request on the wire; its context goes out with the request to the
            // service's own origin (elsewhere only if the API says so), before the signer.
            let hopTrace = trace?.child(request.head.method.rawValue, kind: .client)
            if let hopTrace, withCredentials || api.sendsTraceContextToOtherOrigins {
                hopTrace.tracer.inject(hopTrace.parent.context, into: &request.head.headerFields, using: HTTPFieldsInjector())
            }
            if withCredentials {
                do throws(RunwayError) {
                    credentialNames = try await applyCredentials(
                        to: &request, api: api, service: service, adapters: adapters, credential: credential,
                        bodyDigest: bodyDigest, attempt: attempt, hop: hops)
                } catch {
                    hopTrace?.fail(error)
                    hopTrace?.end()
                    throw error
                }
            }
            hopTrace?.describe(request.head, attempt: attempt, hop: hops)
            guard deadline > .now else {
                hopTrace?.fail(.timeout)
                hopTrace?.end()
                throw .timeout
            }
            // No network: fail now rather than wait out the timeout.
            if let network, !network.path.isReachable {
                hopTrace?.fail(.noNetwork(reason: .unreachable))
                hopTrace?.end()
                throw .noNetwork(reason: .unreachable)
            }
            seen.request = request.head
            let address = connectAddress(for: request.head, service: service)
            seen.address = address
            let response: TransportResponse
            let sentAt = ContinuousClock.now
            do {
                response = try await send(
                    request, api: api, deadline: deadline, hooks: hooks, connectAddress: address, cancellation: cancellation,
                    trace: hopTrace)
                hopTrace?.set("http.response.status_code", Int64(response.head.status.code))
                if let version = response.httpVersion { hopTrace?.set("network.protocol.version", Self.protocolVersion(version)) }
                if response.head.status.code >= 400 {
                    hopTrace?.set("error.type", String(response.head.status.code))
                    hopTrace?.parent.setStatus(SpanStatus(code: .error))
                }
                hopTrace?.end()
                if recorder != nil {
                    record(
                        request, response: .success(response), sentAt: sentAt, attempt: attempt, hop: hops, api: api,
                        loadID: loadID, redacting: credentialNames)
                }
            } catch {
                hopTrace?.fail(error)
                hopTrace?.end()
                if recorder != nil {
                    record(
                        request, response: .failure(error), sentAt: sentAt, attempt: attempt, hop: hops, api: api,
                        loadID: loadID, redacting: credentialNames)
                }
                // The device went offline: no address is to blame, and none is left.
                if let network, !network.path.isReachable, error.isUnreachable {
                    seen.pathWentAway = true
                    throw error
                }
                // The chosen address failed: it is left until the next round, and the next fastest
                // takes over — at once, for this very request, when nothing of it was sent.
                if let address, let selector = service.connection.endpoints, error.faultsAddress {
                    selector.reportFailure(of: address)
                    if error.leftNothingSent, failovers < selector.candidates.count,
                        let next = selector.address, next != address
                    {
                        failovers += 1
                        continue
                    }
                }
                throw error
            }
            // Cookies are kept from the service's own origin only.
            if withCredentials, let jar = service.credentials.cookies, let url = request.head.url {
                jar.store(response.head, for: url)
            }
            seen.status = response.head.status.code
            seen.bytes = response.body.count
            seen.httpVersion = response.httpVersion

            let step = RedirectStep.decide(
                status: response.head.status.code, location: response.head.headerFields[.location],
                request: request.head, hopsSoFar: hops, policy: api.redirectPolicy,
                origin: RedirectStep.Origin(scheme: built.head.scheme, authority: built.head.authority),
                allowsInsecureHTTP: service.connection.allowsInsecureHTTP)
            switch step {
            case .land:
                return Exchanged(
                    response: response, request: CredentialRedaction.redacting(request.head, also: credentialNames),
                    carriedCredential: withCredentials)
            case .refuse(let error):
                throw error
            case .follow(let hop):
                hops += 1
                withCredentials = withCredentials && hop.isSameOrigin
                target = withCredentials ? Self.sameOriginHop(hop, from: target) : Self.bareHop(hop, from: target, api: api)
            }
        }
    }

    /// Adapts, credentials, gives the cookies to and signs a request to the service's own origin:
    /// adapters first, then the credential, so that the signature covers both.
    ///
    /// - returns: The header fields the credential set, redacted from what app code sees.
    private func applyCredentials(
        to request: inout PreparedRequest, api: some API, service: Service, adapters: [any RequestAdapter],
        credential: CredentialLease?, bodyDigest: String?, attempt: Int, hop: Int
    ) async throws(RunwayError) -> Set<HTTPField.Name> {
        if !adapters.isEmpty {
            try await adapters.adapt(
                &request.head, context: AdaptingContext(apiName: api.name, service: service.id, attempt: attempt, hop: hop))
        }
        var credentialNames = Set<HTTPField.Name>()
        if let credential {
            let before = request.head.headerFields
            credential.apply(&request.head)
            credentialNames = CredentialRedaction.changedNames(from: before, to: request.head.headerFields)
        }
        if let jar = service.credentials.cookies, let url = request.head.url, let cookie = jar.field(for: url) {
            request.head.headerFields[.cookie] = cookie
        }
        if let signer = service.credentials.signer {
            let inMemory = request.body?.data
            do {
                try signer.sign(
                    &request.head, body: inMemory,
                    context: SigningContext(
                        apiName: api.name, service: service.id, attempt: attempt,
                        bodySHA256: request.body != nil && inMemory == nil ? bodyDigest : nil))
            } catch let error as RequestSignature.FormatError {
                throw RunwayError.invalidRequest(reason: "signing failed: \(error.reason)")
            } catch {
                throw RunwayError.invalidRequest(reason: "signing failed: \(type(of: error))")
            }
        }
        return credentialNames
    }

    /// Keeps one request on the wire and its answer in the recorder, with the credential's
    /// fields redacted.
    private func record(
        _ request: PreparedRequest, response: Result<TransportResponse, RunwayError>, sentAt: ContinuousClock.Instant,
        attempt: Int, hop: Int, api: some API, loadID: LoadID?, redacting credentialNames: Set<HTTPField.Name>
    ) {
        guard let recorder else { return }
        let (startedAt, offset) = recorder.stamp(sentAt)
        let answer = try? response.get()
        var timings = answer?.timings ?? PhaseTimings()
        if answer == nil { timings[.firstByte] = ContinuousClock.now - sentAt }
        let requestBody = request.body?.data
        recorder.record(
            ExchangeRecord(
                loadID: loadID ?? LoadID(rawValue: 0), apiName: api.name, attempt: attempt, hop: hop, startedAt: startedAt,
                offset: offset, request: CredentialRedaction.redacting(request.head, also: credentialNames),
                requestBody: requestBody.map(recorder.kept), requestBodySize: request.body?.length ?? 0,
                response: answer?.head, responseBody: answer.map { recorder.kept($0.body) } ?? Data(),
                responseBodySize: answer?.body.count ?? 0, httpVersion: answer?.httpVersion, timings: timings,
                error: Self.error(of: response)))
    }

    private static func error(of response: Result<TransportResponse, RunwayError>) -> RunwayError? {
        if case .failure(let error) = response { return error }
        return nil
    }

    /// OpenTelemetry's `network.protocol.version` for a transport's HTTP version (`"HTTP/2"` → `"2"`).
    static func protocolVersion(_ version: String) -> String {
        version.hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
    }

    /// The service's adapters, then the API's.
    static func adapters(of api: some API, service: Service) -> [any RequestAdapter] {
        let own = api.adapters
        return own.isEmpty ? service.adapters : service.adapters + own
    }

    /// The next hop within the service's origin: the request as built (common header fields
    /// included), at the new path, with the method and body the status allows; signed again.
    static func sameOriginHop(_ hop: RedirectStep.Hop, from previous: PreparedRequest) -> PreparedRequest {
        var next = previous
        next.head.method = hop.method
        next.head.scheme = hop.scheme
        next.head.authority = hop.authority
        next.head.path = hop.path
        if !hop.keepsBody {
            next.body = nil
            next.head.headerFields[.contentType] = nil
        }
        return next
    }

    /// The next hop to another origin: only the header fields that describe the representation
    /// asked for (``crossOriginFields``), from the API or the request as built — no signature,
    /// no common header fields, no credential under any name.
    static func bareHop(_ hop: RedirectStep.Hop, from previous: PreparedRequest, api: some API) -> PreparedRequest {
        var fields = HTTPFields()
        for name in crossOriginFields {
            if let value = api.headers[name] ?? previous.head.headerFields[name] { fields[name] = value }
        }
        if hop.keepsBody, let contentType = previous.head.headerFields[.contentType] {
            fields[.contentType] = contentType
        }
        let head = HTTPRequest(
            method: hop.method, scheme: hop.scheme, authority: hop.authority, path: hop.path, headerFields: fields)
        return PreparedRequest(head: head, body: hop.keepsBody ? previous.body : nil)
    }

    /// What a hop to another origin may carry: what is asked for, never who asks. An allowlist,
    /// so that a credential in a field of any name (an `X-Api-Key`) stays with its origin.
    static let crossOriginFields: [HTTPField.Name] = [.accept, .acceptLanguage, .acceptEncoding, .userAgent, .range, .ifRange]

    /// The address an endpoint selector chose for a request to `head`'s host (a service with a
    /// selector is registered only on a transport that can connect to it).
    func connectAddress(for head: HTTPRequest, service: Service) -> String? {
        guard let selector = service.connection.endpoints, selector.matches(authority: head.authority)
        else { return nil }
        return selector.address
    }

    /// Sends one hop, ended by `deadline` — which covers the whole response, head and body — or
    /// by `cancellation`.
    ///
    /// - parameter trace: The request's span: the transport runs with it as the current
    ///   context, so that a transport's own spans (AsyncHTTPClient's) nest under it.
    func send(
        _ prepared: PreparedRequest, api: some API, deadline: ContinuousClock.Instant,
        hooks: TransferHooks = TransferHooks(), connectAddress: String? = nil, cancellation: LoadCancellation? = nil,
        trace: LoadTrace? = nil
    ) async throws(RunwayError) -> TransportResponse {
        var progress: (@Sendable (Int64) -> Void)?
        if let report = hooks.uploadProgress {
            let total = prepared.body?.length ?? 0
            progress = { sent in report(sent, total) }
        }
        // The body is gathered here, under the API's size limit, unless a download streams it;
        // either way it passes the engine's content-coding step first.
        let collector: BodyCollector?
        let target: any ResponseSink
        if let sink = hooks.sink {
            (collector, target) = (nil, sink)
        } else {
            let gathering = BodyCollector(limit: api.maximumResponseSize)
            (collector, target) = (gathering, gathering)
        }
        let decoding = DecodingSink(target: target, transportDecodes: transportDecodesContent)
        var outgoing = TransportRequest(
            head: prepared.head, content: prepared.body, timeout: deadline - .now, apiName: api.name,
            uploadProgress: progress, responseSink: decoding)
        outgoing.connectAddress = connectAddress
        outgoing.pins = pins(forAuthority: prepared.head.authority)
        let sentAt = ContinuousClock.now
        let (result, ended) =
            if let trace {
                await ServiceContext.withValue(trace.parent.context) {
                    await sendWithinDeadline(outgoing, deadline: deadline, cancellation: cancellation)
                }
            } else {
                await sendWithinDeadline(outgoing, deadline: deadline, cancellation: cancellation)
            }
        let endedAt = ContinuousClock.now
        do {
            var response = try result.get()
            response.timings = Self.timings(
                reported: response.timings, sentAt: sentAt, headAt: decoding.headArrivedAt ?? endedAt, endedAt: endedAt)
            var kept: Data?
            if decoding.head == nil {
                // A transport that kept the body instead of streaming it: it passes the same
                // step and the same limit now (without a copy when there is nothing to undo).
                try decoding.begin(response.head)
                if let collector, !decoding.isDecoding {
                    kept = try collector.accept(whole: response.body)
                } else {
                    try response.body.withUnsafeBytes { try decoding.write($0) }
                }
            }
            try decoding.finish()
            response.head = decoding.head ?? response.head
            response.body = kept ?? collector?.collected ?? Data()
            return response
        } catch {
            if ended == .networkLost { throw .noNetwork(reason: .unreachable) }
            if ended == .deadline { throw .timeout }
            if error is CancellationError || cancellation.isCancelledOrTask { throw .cancelled }
            throw TransportFault.classify(error) { .other(String(describing: $0)) }
        }
    }

    /// An exchange's phases: those the transport reported, then the time to the first byte
    /// (less the phases the transport reported before it) and the body, measured here the same
    /// way for every transport.
    static func timings(
        reported: PhaseTimings, sentAt: ContinuousClock.Instant, headAt: ContinuousClock.Instant,
        endedAt: ContinuousClock.Instant
    ) -> PhaseTimings {
        var timings = reported
        let before = [PhaseTimings.Phase.connectionWait, .dns, .connect, .tls, .send].reduce(Duration.zero) { sum, phase in
            sum + (reported[phase] ?? .zero)
        }
        timings[.firstByte] = headAt - sentAt - before
        timings[.body] = endedAt - headAt
        return timings
    }

    /// What ended an exchange before the transport did.
    private enum Ending {
        case deadline
        case networkLost
    }

    /// Sends `request` on the transport, ended through the exchange's own cancellation handle at
    /// `deadline`, when the device's network goes away, when the load's `cancellation` fires, or
    /// when the calling task is cancelled — one mechanism for every transport.
    ///
    /// - returns: The transport's outcome, and what ended the exchange first, if not the transport.
    private func sendWithinDeadline(
        _ request: TransportRequest, deadline: ContinuousClock.Instant, cancellation: LoadCancellation?
    ) async -> (Result<TransportResponse, any Error>, ended: Ending?) {
        let exchange = LoadCancellation()
        var request = request
        request.cancellation = exchange
        var loss: NetworkMonitor.LossTicket?
        if let network {
            guard let ticket = network.watchLoss({ exchange.cancel() }) else {
                return (.failure(RunwayError.noNetwork(reason: .unreachable)), .networkLost)
            }
            loss = ticket
        }
        let ticket = deadlines.watch(until: deadline) { exchange.cancel() }
        let outer = cancellation?.register { exchange.cancel() }
        defer { if let outer { cancellation?.end(outer) } }
        let transport = self.transport
        let honours = transportHonoursCancellation
        let prepared = request
        let result: Result<TransportResponse, any Error>
        do {
            let response = try await withTaskCancellationHandler {
                // A transport that knows only task cancellation: the exchange runs in a task the
                // handle cancels.
                if honours { return try await transport.send(prepared) }
                return try await exchange.run { try await transport.send(prepared) }
            } onCancel: {
                exchange.cancel()
            }
            result = .success(response)
        } catch {
            result = .failure(error)
        }
        let expired = deadlines.stop(ticket)
        if let loss, let network, network.endWatch(loss) { return (result, .networkLost) }
        return (result, expired ? .deadline : nil)
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

    /// The load's metrics: its outcome and duration, its retries, and a cache answer's tier.
    private func count<Value>(
        _ result: Result<Value, RunwayError>, api: String, service: ServiceID, attempts: Attempts, duration: Duration,
        in metrics: EngineMetrics
    ) {
        let outcome: String
        switch result {
        case .success(let value):
            outcome = "success"
            if case .cache(let tier, _, let isStale)? = (value as? RawResponse)?.origin {
                metrics.cache(api: api, result: isStale ? "stale" : "hit", tier: tier.rawValue)
            }
        case .failure(.cancelled): outcome = "cancelled"
        case .failure(let error): outcome = error.messageKey
        }
        metrics.load(api: api, service: service, outcome: outcome, duration: duration, retries: max(attempts.count - 1, 0))
    }

    /// Writes the load's log line, counts its metrics and keeps its record.
    ///
    /// - parameter joined: Whether the load joined an identical one in flight.
    func log<Value>(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<Value, RunwayError>,
        _ attempts: Attempts, started: ContinuousClock.Instant, joined: Bool = false
    ) {
        let duration = ContinuousClock.now - started
        if let recorder {
            record(loadID, api, service: service, result, attempts, started: started, duration: duration, joined: joined, in: recorder)
        }
        if let metrics { count(result, api: api.name, service: service, attempts: attempts, duration: duration, in: metrics) }
        // Nothing of the line is built when the level filters it out (as in production).
        guard logger.logLevel <= RequestLog.level(of: result) else { return }
        let origin = result.map { value in (value as? RawResponse)?.origin ?? .network }
        RequestLog.write(
            to: logger, loadID: loadID, service: service, apiName: api.name, request: attempts.request, method: attempts.request?.method ?? api.method,
            result: origin, status: attempts.status, bytes: attempts.bytes, attempts: attempts.count, duration: duration,
            httpVersion: attempts.httpVersion, address: attempts.address)
    }

    private func record<Value>(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<Value, RunwayError>, _ attempts: Attempts,
        started: ContinuousClock.Instant, duration: Duration, joined: Bool, in recorder: LoadRecorder
    ) {
        let (startedAt, offset) = recorder.stamp(started)
        let outcome: LoadRecord.Outcome
        var timings = PhaseTimings()
        switch result {
        case .success(let value):
            let response = value as? RawResponse
            timings = response?.timings ?? timings
            if case .cache(let tier, _, let isStale)? = response?.origin {
                outcome = .cache(tier: tier, isStale: isStale)
            } else {
                let status = response?.status.code ?? attempts.status ?? 0
                outcome = joined ? .joined(status: status) : .network(status: status)
            }
        case .failure(let error):
            outcome = joined ? .joined(status: nil) : .failed(error)
        }
        recorder.record(
            LoadRecord(
                loadID: loadID, apiName: api.name, service: service, startedAt: startedAt, offset: offset, duration: duration,
                outcome: outcome, timings: timings))
    }
}
