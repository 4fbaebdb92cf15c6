import Foundation
import HTTPTypes

extension Engine {
    /// The load of a cacheable API: memory then disk, an identical load in flight joined, the
    /// network, the answer stored — and a stale entry when the network is unreachable and the
    /// policy allows it.
    func performCachedLoad<Endpoint: API>(
        _ api: Endpoint, key: CacheKey, cache: ResponseCache, registered: RegisteredService, params: Parameters,
        loadID: LoadID, ignoringCache: Bool, cancellation: LoadCancellation?, trace: LoadTrace?,
        started: ContinuousClock.Instant,
        land: @escaping @Sendable (TransportResponse, HTTPRequest, Int) -> Result<RawResponse, RunwayError>
    ) async -> (result: Result<RawResponse, RunwayError>, retryAfter: Duration?) {
        let service = registered.service
        // A private or local type's default name may be another type's in another launch: its
        // answers stay in this process.
        let policy = {
            var policy = api.cachePolicy
            if policy.tiers == .memoryAndDisk, TypeName.dependsOnLaunch(api) { policy.tiers = .memory }
            return policy
        }()
        let lookup: Duration?
        if ignoringCache {
            lookup = nil
        } else {
            let lookupTrace = trace?.child("cache lookup")
            let lookupStarted = ContinuousClock.now
            let hit = await cache.lookup(key, policy: policy, allowExpired: false, parsesJSON: api.responseFormat == .json)
            lookup = ContinuousClock.now - lookupStarted
            lookupTrace?.set("runway.cache.result", hit == nil ? "miss" : "hit")
            lookupTrace?.set("runway.cache.tier", hit?.tier.rawValue)
            lookupTrace?.end()
            if let hit {
                let result = landFromCache(
                    hit, api: api, service: service, registered: registered, params: params, lookup: lookup, trace: trace)
                log(loadID, api, service: service.id, result, Attempts(bytes: hit.entry.body.count), started: started)
                return (result, nil)
            }
        }
        if !ignoringCache { metrics?.cache(api: api.name, result: "miss", tier: "none") }
        let attemptsSeen = Locked(Attempts())
        let metrics = self.metrics
        let apiName = api.name
        // The shared call runs in the coalescer's task: this load's handle only makes it leave.
        var result = await coalescer.run(
            key.hash, cancellation: cancellation,
            onJoin: {
                attemptsSeen.withLock { $0.joined = true }
                metrics?.coalesced(api: apiName)
            }
        ) { [self] in
            // A flight for this key may have ended between this load's lookup and now: its
            // answer is in memory, and a second request would be one too many.
            if !ignoringCache, let hit = cache.freshInMemory(key) {
                return landFromCache(hit, api: api, service: service, registered: registered, params: params, lookup: lookup, trace: trace)
            }
            let generation = cache.currentGeneration
            let signIn = service.credentials.authentication?.epoch
            let (result, attempts) = await runAttempts(
                api, params: params, registered: registered, loadID: loadID, trace: trace, land: land)
            attemptsSeen.withLock { seen in
                let joined = seen.joined
                seen = attempts
                seen.joined = joined
            }
            // An answer is kept only for the sign-in it was fetched in.
            if case .success(let response) = result, signIn == service.credentials.authentication?.epoch {
                cache.store(response, key: key, api: api, policy: policy, generation: generation)
            }
            return result
        }
        if policy.staleIfOffline, case .failure(let error) = result, error.isUnreachable,
            let stale = await cache.lookup(key, policy: policy, allowExpired: true, parsesJSON: api.responseFormat == .json)
        {
            result = landFromCache(stale, api: api, service: service, registered: registered, params: params, lookup: nil, trace: trace)
        }
        if let lookup, case .success(var response) = result, response.origin == .network {
            response.timings[.cacheLookup] = lookup
            result = .success(response)
        }
        let attempts = attemptsSeen.withLock { $0 }
        if attempts.joined { trace?.set("runway.coalesced", true) }
        log(loadID, api, service: service.id, result, attempts, started: started, joined: attempts.joined)
        return (result, attempts.retryAfter)
    }

    /// Lands a cached entry like a network response: the convention and the response validator
    /// run again.
    ///
    /// - parameter lookup: How long the lookup took, for the answer's timings.
    private func landFromCache(
        _ hit: ResponseCache.Hit, api: some API, service: Service, registered: RegisteredService, params: Parameters,
        lookup: Duration?, trace: LoadTrace?
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
            origin: .cache(tier: hit.tier, age: age, isStale: hit.isExpired), parsed: hit.entry.json, trace: trace)
    }
}
