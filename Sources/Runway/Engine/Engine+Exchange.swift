import Foundation
import HTTPTypes
import Tracing

extension Engine {
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
    ///
    /// - parameter epoch: The sign-in the request is made for: a hop is sent, and a cookie of
    ///   an answer stored, only while it is still the current one.
    func exchange(
        _ built: PreparedRequest, api: some API, registered: RegisteredService, attempt: Int,
        deadline: ContinuousClock.Instant, credential: CredentialLease? = nil, epoch: SignInEpoch? = nil,
        bodyDigest: String? = nil,
        hooks: TransferHooks = TransferHooks(), cancellation: LoadCancellation? = nil, loadID: LoadID? = nil,
        trace: LoadTrace? = nil, seen: inout Attempts
    ) async throws(RunwayError) -> Exchanged {
        let authentication = registered.service.credentials.authentication
        // Loads that carry no credential still store the service's cookies: for the sign-in of now.
        let signIn = epoch ?? authentication?.epoch
        var target = built
        var withCredentials = true
        var hops = 0
        /// Addresses given up on within this attempt, each for a failure before anything was sent.
        var failovers = 0
        /// The fields the authenticator set: redacted, with the usual ones, from what app code sees.
        var credentialNames = CredentialRedaction.Marks()
        let adapters = Self.adapters(of: api, service: registered.service)
        while true {
            var request = target
            // A span per request on the wire; its context goes out with the request to the
            // service's own origin (elsewhere only if the API says so), before the signer.
            let hopTrace = trace?.child(request.head.method.rawValue, kind: .client)
            if let hopTrace, withCredentials || api.sendsTraceContextToOtherOrigins {
                hopTrace.tracer.inject(hopTrace.parent.context, into: &request.head.headerFields, using: HTTPFieldsInjector())
            }
            // A redirect hop is sent again only for the user the request was made for.
            if hops > 0, withCredentials, let epoch, let authentication, authentication.epoch != epoch {
                hopTrace?.fail(.userChanged)
                hopTrace?.end()
                throw .userChanged
            }
            if withCredentials {
                do throws(RunwayError) {
                    credentialNames = try await applyCredentials(
                        to: &request, api: api, service: registered.service, adapters: adapters, credential: credential,
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
            let redacted = CredentialRedaction.redacting(request.head, also: credentialNames)
            seen.request = redacted
            let address = connectAddress(for: request.head, service: registered.service)
            seen.address = address
            let response: TransportResponse
            let sentAt = ContinuousClock.now
            var pathLost = false
            do {
                response = try await send(
                    request, api: api, deadline: deadline, hooks: hooks, connectAddress: address, cancellation: cancellation,
                    trace: hopTrace, pathLost: &pathLost)
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
                // The device went offline: no address is to blame, and none is left. (Also when the
                // path is already back: the exchange was cut mid-way, so part of it may have
                // left, and it is not sent elsewhere as if nothing had.)
                if pathLost || ((network.map { !$0.path.isReachable } ?? false) && error.isUnreachable) {
                    seen.pathWentAway = true
                    throw error
                }
                // The chosen address failed: it is left until the next round, and the next fastest
                // takes over — at once, for this very request, when nothing of it was sent.
                if let address, let selector = registered.service.connection.endpoints, error.faultsAddress {
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
            // Cookies are kept from the service's own origin only, and only for the sign-in the
            // request was made in: a cookie set for a user who has since signed out is dropped.
            if withCredentials, let jar = registered.service.credentials.cookies, let url = request.head.url,
                signIn == authentication?.epoch
            {
                jar.store(response.head, for: url)
            }
            seen.status = response.head.status.code
            seen.bytes = response.body.count
            seen.httpVersion = response.httpVersion

            let step = RedirectStep.decide(
                status: response.head.status.code, location: response.head.headerFields.value(of: .location),
                request: request.head, hopsSoFar: hops, policy: api.redirectPolicy,
                origin: RedirectStep.Origin(scheme: built.head.scheme, authority: built.head.authority),
                allowsInsecureHTTP: registered.service.connection.allowsInsecureHTTP)
            switch step {
            case .land:
                return Exchanged(response: response, request: redacted, carriedCredential: withCredentials)
            case .refuse(let error):
                throw error
            case .follow(let hop):
                hops += 1
                withCredentials = withCredentials && hop.isSameOrigin
                target = withCredentials ? hop.sameOrigin(from: target) : hop.crossOrigin(from: target, api: api)
            }
        }
    }
}
