import Foundation
import HTTPTypes

extension Engine {
    /// The load of a cacheable API: memory then disk, an identical load in flight joined, the
    /// network — asked conditionally when a stored entry has validators, a `304` delivering the
    /// stored body — the answer stored as the server allows, and a stored answer standing in
    /// when the server cannot answer and the server's word and the policy allow it.
    ///
    /// - parameter preview: Receives the stored answer, marked stale, before the network is
    ///   asked (``CachePolicy/cacheThenNetwork``).
    func performCachedLoad<Endpoint: API>(
        _ api: Endpoint, key: CacheKey, cache: ResponseCache, registered: RegisteredService, params: Parameters,
        loadID: LoadID, ignoringCache: Bool, cancellation: LoadCancellation?, trace: LoadTrace?,
        started: ContinuousClock.Instant, preview: (@Sendable (RawResponse) async -> Void)? = nil,
        land: (TransportResponse, HTTPRequest, Int) -> Result<RawResponse, RunwayError>
    ) async -> (result: Result<RawResponse, RunwayError>, attempts: Attempts) {
        let service = registered.service
        // A private or local type's default name may be another type's in another launch: its
        // answers stay in this process.
        let policy = {
            var policy = api.cachePolicy
            if policy.tiers == .memoryAndDisk, TypeName.dependsOnLaunch(api) { policy.tiers = .memory }
            return policy
        }()
        let parsesJSON = api.responseFormat == .json
        let lookupTrace = trace?.child("cache lookup")
        let lookupStarted = ContinuousClock.now
        // Fresh or not: a stale entry still has validators, and may answer while it is refreshed.
        let stored = await cache.lookup(key, policy: policy, allowExpired: true, parsesJSON: parsesJSON)
        let lookup = ContinuousClock.now - lookupStarted
        let usable = ignoringCache ? nil : stored.flatMap { hit in usableWithoutServer(hit, now: cache.now()) }
        lookupTrace?.set("runway.cache.result", usable == nil ? "miss" : "hit")
        lookupTrace?.set("runway.cache.tier", stored?.tier.rawValue)
        lookupTrace?.end()
        if let usable {
            let result = landFromCache(
                usable.hit, api: api, service: service, registered: registered, params: params, lookup: lookup,
                stale: usable.refresh, trace: trace)
            log(loadID, api, service: service.id, result, Attempts(bytes: usable.hit.entry.body.count), started: started)
            // stale-while-revalidate: answered now, refreshed behind the caller's back (joined by
            // any identical load meanwhile).
            if usable.refresh {
                // A load of its own: not this load's span, which ends now.
                let refreshLand: @Sendable (TransportResponse, HTTPRequest, Int) -> Result<RawResponse, RunwayError> = {
                    response, request, attempt in
                    Landing.land(response, request: request, api: api, service: service, attempts: attempt)
                }
                Task.detached { [self] in
                    _ = await performCachedLoad(
                        api, key: key, cache: cache, registered: registered, params: params, loadID: .next(),
                        ignoringCache: true, cancellation: nil, trace: nil, started: .now, land: refreshLand)
                }
            }
            return (result, Attempts())
        }
        if policy.cacheThenNetwork, let stored, let preview,
            case .success(let early) = landFromCache(
                stored, api: api, service: service, registered: registered, params: params, lookup: lookup, stale: true,
                trace: trace)
        {
            await preview(early)
        }
        // Asked conditionally: a 304 confirms the stored body, which then answers.
        let validated = stored.flatMap { $0.conditions.isEmpty ? nil : $0 }
        let flight = CallCoalescer.Identity(kind: ObjectIdentifier(CacheKey.self), key: key.hash)
        let (flightResult, attempts) = await shareFlight(flight, api: api, cancellation: cancellation) { [self] in
            // A flight for this key may have ended between this load's lookup and now: its
            // answer is in memory, and a second request would be one too many.
            if !ignoringCache, let hit = cache.freshInMemory(key) {
                let result = landFromCache(
                    hit, api: api, service: service, registered: registered, params: params, lookup: lookup, trace: trace)
                return (CallCoalescer.Outcome(result: result), Attempts())
            }
            let generation = cache.currentGeneration
            let signIn = service.credentials.authentication?.epoch
            var hooks = TransferHooks()
            if let validated {
                let conditions = validated.conditions
                hooks.prepare = { built in
                    for field in conditions where built.head.headerFields[field.name] == nil {
                        built.head.headerFields.append(field)
                    }
                }
            }
            let (result, attempts) = await runAttempts(
                api, params: params, registered: registered, hooks: hooks, cancellation: cancellation, loadID: loadID,
                trace: trace
            ) { response, request, attempt in
                guard let validated, response.head.status.code == 304 else { return land(response, request, attempt) }
                return landRevalidated(
                    validated, notModified: response, request: request, api: api, service: service, attempt: attempt,
                    trace: trace)
            }
            // An answer is kept only for the sign-in it was fetched in.
            if case .success(let response) = result, signIn == service.credentials.authentication?.epoch {
                cache.store(response, key: key, api: api, policy: policy, generation: generation)
            }
            return (CallCoalescer.Outcome(result: result, answer: attempts.answer), attempts)
        }
        var result = flightResult
        // A revalidation is counted as itself when the load is logged: a hit with a round trip.
        if !ignoringCache, !result.isRevalidated { metrics?.cache(api: api.name, result: "miss", tier: "none") }
        // Read again: an entry removed meanwhile (a sign-out) never stands in.
        if case .failure(let error) = result, (policy.staleIfOffline && error.isUnreachable) || Revalidation.isServerFailure(error),
            let stale = await cache.lookup(key, policy: policy, allowExpired: true, parsesJSON: parsesJSON),
            standsIn(stale, for: error, policy: policy, now: cache.now())
        {
            result = landFromCache(
                stale, api: api, service: service, registered: registered, params: params, lookup: nil, stale: true,
                trace: trace)
        }
        if case .success(var response) = result, response.origin.askedServer {
            response.timings[.cacheLookup] = lookup
            result = .success(response)
        }
        if attempts.joined { trace?.set("runway.coalesced", true) }
        log(loadID, api, service: service.id, result, attempts, started: started, joined: attempts.joined)
        return (result, attempts)
    }

    /// A stored entry that answers without asking the server: a fresh one, or — within the
    /// server's `stale-while-revalidate` window, unless it forbids stale use — a stale one that
    /// answers while it is refreshed (`refresh`).
    private func usableWithoutServer(_ hit: ResponseCache.Hit, now: Date) -> (hit: ResponseCache.Hit, refresh: Bool)? {
        guard hit.isExpired else { return (hit, false) }
        let control = hit.control
        guard let window = control.staleWhileRevalidate, !control.mustRevalidate, !control.noCache,
            hit.staleness(at: now) <= TimeInterval(window)
        else { return nil }
        return (hit, true)
    }

    /// Whether a stored entry stands in for a load that failed with `error`: never when the
    /// server said `must-revalidate` or `no-cache`; when the network is unreachable, with
    /// ``CachePolicy/staleIfOffline``; when the server failed (a 5xx, a lost or refused
    /// connection, a timeout), with ``CachePolicy/staleIfError`` or within the response's own
    /// `stale-if-error` window.
    private func standsIn(_ hit: ResponseCache.Hit, for error: RunwayError, policy: CachePolicy, now: Date) -> Bool {
        let control = hit.control
        guard !control.mustRevalidate, !control.noCache else { return false }
        if policy.staleIfOffline, error.isUnreachable { return true }
        guard Revalidation.isServerFailure(error) else { return false }
        if policy.staleIfError { return true }
        guard let window = control.staleIfError else { return false }
        return hit.staleness(at: now) <= TimeInterval(window)
    }

    /// Lands the stored answer a `304` confirmed: its body, its header fields refreshed by the
    /// 304's, as ``ResponseOrigin/revalidated(tier:)``.
    private func landRevalidated(
        _ hit: ResponseCache.Hit, notModified: TransportResponse, request: HTTPRequest, api: some API, service: Service,
        attempt: Int, trace: LoadTrace?
    ) -> Result<RawResponse, RunwayError> {
        let fields = Revalidation.merge(stored: hit.entry.headers, notModified: notModified.head.headerFields)
        var response = TransportResponse(
            head: HTTPResponse(status: .init(code: hit.entry.status), headerFields: fields), body: hit.entry.body)
        response.timings = notModified.timings
        return Landing.land(
            response, request: request, api: api, service: service, attempts: attempt, origin: .revalidated(tier: hit.tier),
            parsed: hit.entry.json, trace: trace)
    }

    /// Lands a cached entry like a network response: the convention and the response validator
    /// run again.
    ///
    /// - parameter lookup: How long the lookup took, for the answer's timings.
    private func landFromCache(
        _ hit: ResponseCache.Hit, api: some API, service: Service, registered: RegisteredService, params: Parameters,
        lookup: Duration?, stale: Bool? = nil, trace: LoadTrace?
    ) -> Result<RawResponse, RunwayError> {
        var request = (try? RequestBuilder.build(api: api, service: service, base: registered.baseURL.get(), params: params).head)
            ?? HTTPRequest(method: api.method, scheme: nil, authority: nil, path: api.path)
        // The URL that answered when the entry was stored, after redirects.
        if let stored = hit.entry.url.flatMap(URL.init(string:)) {
            let answered = HTTPRequest(method: request.method, url: stored)
            request.scheme = answered.scheme
            request.authority = answered.authority
            request.path = answered.path
        }
        let head = HTTPResponse(status: .init(code: hit.entry.status), headerFields: hit.entry.headers)
        let age = Duration.seconds(max(0, (cache?.now() ?? Date()).timeIntervalSince(hit.entry.storedAt)))
        var timings = PhaseTimings()
        timings[.cacheLookup] = lookup
        for phase in PhaseTimings.Phase.exchange { timings.skip(phase) }
        var response = TransportResponse(head: head, body: hit.entry.body)
        response.timings = timings
        return Landing.land(
            response, request: request, api: api, service: service, attempts: 0,
            origin: .cache(tier: hit.tier, age: age, isStale: stale ?? hit.isExpired), parsed: hit.entry.json, trace: trace)
    }
}

extension Result where Success == RawResponse {
    /// Whether a `304` confirmed the stored answer this delivers.
    fileprivate var isRevalidated: Bool {
        guard case .success(let response) = self, case .revalidated = response.origin else { return false }
        return true
    }
}
