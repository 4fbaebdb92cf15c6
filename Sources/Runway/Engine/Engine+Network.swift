import Foundation
import HTTPTypes
import Logging

/// What the attempts of one load saw, for its log line.
struct Attempts: Sendable {
    var count = 0
    /// The last request sent: the last hop of the last attempt.
    var request: HTTPRequest?
    var status: Int?
    var bytes = 0
    var httpVersion: String?
}

extension Engine {
    /// Every attempt of one call over the network: build, sign, send, follow redirects, land,
    /// and retry what the API's policy retries — all within the API's deadlines.
    func network(_ api: some API, params: Parameters, registered: RegisteredService) async -> (
        Result<RawResponse, RunwayError>, Attempts
    ) {
        let service = registered.service
        let clock = ContinuousClock()
        let loadDeadline = api.totalTimeout.map { clock.now + $0 }
        var seen = Attempts()
        while true {
            seen.count += 1
            let attempt = seen.count
            var attemptDeadline = clock.now + api.timeout
            if let loadDeadline, loadDeadline < attemptDeadline { attemptDeadline = loadDeadline }
            var retryAfter: Duration?
            let outcome: Result<RawResponse, RunwayError>
            do throws(RunwayError) {
                let built = try RequestBuilder.build(
                    api: api, service: service, base: registered.baseURL.get(), params: params)
                let (response, request) = try await exchange(
                    built, api: api, registered: registered, attempt: attempt, deadline: attemptDeadline, seen: &seen)
                retryAfter = Landing.retryAfter(in: response.head)
                outcome = Landing.land(response, request: request, api: api, service: service, attempts: attempt)
            } catch {
                outcome = .failure(error)
            }
            if case .failure(let error) = outcome, !Task.isCancelled,
                api.retryPolicy.shouldRetry(after: error, method: api.method, attempt: attempt)
            {
                let delay = api.retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter)
                if let loadDeadline, clock.now + delay >= loadDeadline { return (outcome, seen) }
                do {
                    try await sleep(delay)
                    continue
                } catch {
                    return (.failure(.cancelled), seen)
                }
            }
            return (outcome, seen)
        }
    }

    /// One attempt's exchange: the first request and every redirect hop the API's policy
    /// follows, each checked against the service's rules and sent within `deadline`.
    ///
    /// - returns: The final answer and the request that got it.
    func exchange(
        _ built: PreparedRequest, api: some API, registered: RegisteredService, attempt: Int,
        deadline: ContinuousClock.Instant, seen: inout Attempts
    ) async throws(RunwayError) -> (TransportResponse, HTTPRequest) {
        let service = registered.service
        let origin = RedirectStep.Origin(scheme: built.head.scheme, authority: built.head.authority)
        var target = built
        var withCredentials = true
        var hops = 0
        while true {
            var request = target
            if withCredentials, let signer = service.signer {
                do {
                    try signer.sign(
                        &request.head, body: request.body,
                        context: SigningContext(apiName: api.name, service: service.id, attempt: attempt))
                } catch let error as RequestSignature.FormatError {
                    throw RunwayError.invalidRequest(reason: "signing failed: \(error.reason)")
                } catch {
                    throw RunwayError.invalidRequest(reason: "signing failed: \(type(of: error))")
                }
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout }
            seen.request = request.head
            let response = try await send(request, api: api, timeout: remaining)
            seen.status = response.head.status.code
            seen.bytes = response.body.count
            seen.httpVersion = response.httpVersion

            let step = RedirectStep.decide(
                status: response.head.status.code, location: response.head.headerFields[.location],
                request: request.head, hopsSoFar: hops, policy: api.redirectPolicy, origin: origin,
                allowsInsecureHTTP: service.allowsInsecureHTTP)
            switch step {
            case .land:
                return (response, request.head)
            case .refuse(let error):
                throw error
            case .follow(let hop):
                hops += 1
                withCredentials = withCredentials && hop.isSameOrigin
                target = withCredentials ? Self.sameOriginHop(hop, from: target) : Self.bareHop(hop, from: target, api: api)
            }
        }
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

    /// The next hop to another origin: only what the API itself says, with no credentials —
    /// no signature, no common header fields, no `Authorization`, `Cookie` or
    /// `Proxy-Authorization`.
    static func bareHop(_ hop: RedirectStep.Hop, from previous: PreparedRequest, api: some API) -> PreparedRequest {
        var fields = HTTPFields()
        for field in api.headers where !credentialFields.contains(field.name) { fields.append(field) }
        for name in [HTTPField.Name.accept, .userAgent] where fields[name] == nil {
            if let value = previous.head.headerFields[name] { fields[name] = value }
        }
        if hop.keepsBody, let contentType = previous.head.headerFields[.contentType] {
            fields[.contentType] = contentType
        }
        let head = HTTPRequest(
            method: hop.method, scheme: hop.scheme, authority: hop.authority, path: hop.path, headerFields: fields)
        return PreparedRequest(head: head, body: hop.keepsBody ? previous.body : nil)
    }

    /// Header fields that carry who is asking; never sent across origins.
    static let credentialFields: Set<HTTPField.Name> = [.authorization, .cookie, .proxyAuthorization]

    /// Sends one hop within `timeout`, which covers the whole response.
    func send(_ prepared: PreparedRequest, api: some API, timeout: Duration) async throws(RunwayError) -> TransportResponse {
        let request = TransportRequest(head: prepared.head, body: prepared.body, timeout: timeout, apiName: api.name)
        let transport = self.transport
        do {
            if transport.enforcesTimeout {
                return try await transport.send(request)
            }
            return try await withThrowingTaskGroup(of: TransportResponse.self) { group in
                group.addTask { try await transport.send(request) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw RunwayError.timeout
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw RunwayError.cancelled }
                return first
            }
        } catch let error as RunwayError {
            throw Task.isCancelled ? .cancelled : error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw Task.isCancelled ? .cancelled : .transport(description: String(describing: error))
        }
    }

    func log(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<RawResponse, RunwayError>,
        _ attempts: Attempts, _ duration: Duration
    ) {
        RequestLog.write(
            to: logger, loadID: loadID, service: service, apiName: api.name, request: attempts.request, method: attempts.request?.method ?? api.method,
            result: result, status: attempts.status, bytes: attempts.bytes, attempts: attempts.count, duration: duration,
            httpVersion: attempts.httpVersion)
    }
}
