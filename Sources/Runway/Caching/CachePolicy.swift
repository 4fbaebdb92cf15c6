public import HTTPTypes

/// How an API's responses are cached: which tiers, for how long, whether an expired entry may
/// stand in when the network is unreachable, and what goes into an entry's key.
///
/// One value on the ``API`` (``API/cachePolicy``) holds everything about an API's cache, so a
/// reader finds it in one place. Caching applies to `GET` and `HEAD` only. The defaults are
/// 180 seconds in memory (a list the user comes back to within three minutes is not
/// fetched again), 24 hours on disk.
///
/// For example:
///
/// ```swift
/// struct CityListAPI: API {
///     // …
///     var cachePolicy: CachePolicy {
///         .memoryAndDisk(staleIfOffline: true)
///             .version(2)                      // the answer's shape changed in 5.2
///             .ignoringParams(["ts"])          // a timestamp that does not change the answer
///     }
/// }
/// ```
public struct CachePolicy: Sendable, Hashable {
    /// The tiers used.
    public enum Tiers: Sendable, Hashable {
        /// No caching.
        case none
        /// The in-memory tier only.
        case memory
        /// Memory, backed by the disk tier.
        case memoryAndDisk
    }

    public var tiers: Tiers
    /// How long an entry is fresh in memory, from when it was fetched.
    public var memoryLifetime: Duration
    /// How long an entry is fresh on disk, from when it was fetched.
    public var diskLifetime: Duration
    /// Deliver an expired entry, marked stale, when the network is unreachable.
    public var staleIfOffline: Bool
    /// Bumped when the response's shape changes, so entries stored by an older version of the
    /// app are not used. Default 0.
    public var version: Int
    /// Params that do not change the response (timestamps, nonces), left out of the key.
    /// Default: none.
    public var ignoredParams: Set<String>
    /// A value that separates entries per person (a user id), so that one user never sees
    /// another's answer and the entries can be removed on logout with
    /// ``ResponseCache/removeEntries(sensitiveComponent:)``. A request that carries a credential
    /// or a cookie is cached only under one. Default `nil`.
    public var sensitiveComponent: String?
    /// Request header fields whose values change the response, so that they are part of the
    /// key, beyond `Accept-Language` which always is. A response's own `Vary` joins them.
    /// Default: none.
    public var varyingHeaderFields: [HTTPField.Name]
    /// Whose lifetime applies when the server gives none. Default ``Freshness/policy``.
    public var freshness: Freshness
    /// Deliver an expired entry, marked stale, when the server answers with a 5xx or the
    /// connection fails — not only when the network is unreachable. A response's own
    /// `stale-if-error` allows this for its window without it; `must-revalidate` and
    /// `no-cache` forbid it. Default `false`.
    public var staleIfError: Bool
    /// When the network is to be asked (the entry is stale, or the load ignores the cache),
    /// deliver the stored answer at once, marked stale, and then the network's, in that order:
    /// to a manager's delegate (two deliveries of one load) and to
    /// ``APIManager/updates(with:body:)``. A fresh entry still answers alone; a caller awaiting
    /// one value gets the network's. Default `false`.
    public var cacheThenNetwork: Bool

    /// Whose lifetime decides how long an entry is fresh.
    ///
    /// Either way the server's word is a limit (`no-store` is never kept, `max-age` / `Expires`
    /// cap freshness, `no-cache` means revalidate on every use) and the API's lifetimes
    /// (``memoryLifetime``, ``diskLifetime``) are a ceiling.
    public enum Freshness: Sendable, Hashable {
        /// The API's lifetimes, capped by the server's when it gives one.
        case policy
        /// The server's, as RFC 9111 says for a private cache: without an explicit lifetime, a
        /// tenth of the time since `Last-Modified` (at most a week), else none (revalidated on
        /// every use).
        case server
    }

    /// Creates a policy; the static members (``none``, ``memory(lifetime:staleIfOffline:)``,
    /// ``memoryAndDisk(memoryLifetime:diskLifetime:staleIfOffline:)``) read better.
    public init(
        tiers: Tiers, memoryLifetime: Duration = .seconds(180), diskLifetime: Duration = .seconds(86_400),
        staleIfOffline: Bool = false, version: Int = 0, ignoredParams: Set<String> = [],
        sensitiveComponent: String? = nil, varyingHeaderFields: [HTTPField.Name] = [], freshness: Freshness = .policy,
        staleIfError: Bool = false, cacheThenNetwork: Bool = false
    ) {
        self.tiers = tiers
        self.memoryLifetime = memoryLifetime
        self.diskLifetime = diskLifetime
        self.staleIfOffline = staleIfOffline
        self.version = version
        self.ignoredParams = ignoredParams
        self.sensitiveComponent = sensitiveComponent
        self.varyingHeaderFields = varyingHeaderFields
        self.freshness = freshness
        self.staleIfError = staleIfError
        self.cacheThenNetwork = cacheThenNetwork
    }

    /// No caching; the default of an ``API``.
    public static let none = CachePolicy(tiers: .none)

    /// Memory only, fresh for `lifetime` (default 180 s).
    public static func memory(lifetime: Duration = .seconds(180), staleIfOffline: Bool = false) -> CachePolicy {
        CachePolicy(tiers: .memory, memoryLifetime: lifetime, staleIfOffline: staleIfOffline)
    }

    /// Memory (default 180 s) and disk (default 24 h).
    public static func memoryAndDisk(
        memoryLifetime: Duration = .seconds(180), diskLifetime: Duration = .seconds(86_400), staleIfOffline: Bool = false
    ) -> CachePolicy {
        CachePolicy(tiers: .memoryAndDisk, memoryLifetime: memoryLifetime, diskLifetime: diskLifetime, staleIfOffline: staleIfOffline)
    }

    /// Caches as RFC 9111 says for a private cache — the server's lifetimes, validators, `Vary`,
    /// `stale-while-revalidate` and `stale-if-error` — with `ceiling` as the longest any entry
    /// stays fresh in either tier.
    public static func followingServer(tiers: Tiers = .memoryAndDisk, ceiling: Duration = .seconds(86_400)) -> CachePolicy {
        CachePolicy(tiers: tiers, memoryLifetime: ceiling, diskLifetime: ceiling, freshness: .server)
    }

    /// This policy with ``staleIfError`` set.
    public func staleIfError(_ allowed: Bool = true) -> CachePolicy {
        var policy = self
        policy.staleIfError = allowed
        return policy
    }

    /// This policy with ``cacheThenNetwork`` set.
    public func cacheThenNetwork(_ enabled: Bool = true) -> CachePolicy {
        var policy = self
        policy.cacheThenNetwork = enabled
        return policy
    }

    /// This policy with ``version`` set.
    public func version(_ version: Int) -> CachePolicy {
        var policy = self
        policy.version = version
        return policy
    }

    /// This policy with `names` added to ``ignoredParams``.
    public func ignoringParams(_ names: Set<String>) -> CachePolicy {
        var policy = self
        policy.ignoredParams.formUnion(names)
        return policy
    }

    /// This policy with ``sensitiveComponent`` set: entries kept apart per `component` (a user id).
    public func sensitiveComponent(_ component: String?) -> CachePolicy {
        var policy = self
        policy.sensitiveComponent = component
        return policy
    }

    /// This policy with `fields` added to ``varyingHeaderFields``.
    public func varying(on fields: [HTTPField.Name]) -> CachePolicy {
        var policy = self
        for field in fields where !policy.varyingHeaderFields.contains(field) {
            policy.varyingHeaderFields.append(field)
        }
        return policy
    }
}

/// Where a delivered response came from.
public enum ResponseOrigin: Sendable, Hashable {
    /// Fetched from the network for this load.
    case network
    /// Answered by a cache tier; `age` is the time since it was fetched; `isStale` marks an
    /// expired entry delivered when the server could not be asked or failed (stale-if-offline,
    /// stale-if-error), while it is refreshed (`stale-while-revalidate`), or ahead of the
    /// network's answer (``CachePolicy/cacheThenNetwork``).
    case cache(tier: CacheTier, age: Duration, isStale: Bool)
    /// A stored answer the server confirmed unchanged (`304 Not Modified` to a conditional
    /// request): the stored body, with the header fields the `304` refreshed. A network round
    /// trip, but not the body.
    case revalidated(tier: CacheTier)

    /// Whether a cache answered (revalidated or not).
    public var isCached: Bool {
        if case .network = self { return false }
        return true
    }

    /// Whether the server was asked for this answer (a network answer or a revalidation).
    var askedServer: Bool {
        switch self {
        case .network, .revalidated: true
        case .cache: false
        }
    }

    /// Whether the answer is an expired entry delivered without the server's confirmation.
    public var isStale: Bool {
        if case .cache(_, _, true) = self { return true }
        return false
    }
}

/// A cache tier.
public enum CacheTier: String, Sendable, Hashable {
    case memory
    case disk
}
