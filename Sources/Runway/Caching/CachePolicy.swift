/// How an API's responses are cached: which tiers, for how long, and whether an expired entry may
/// stand in when the network is unreachable.
///
/// Caching applies to `GET` and `HEAD` only. The defaults follow the seed: 180 seconds in memory
/// (a list the user comes back to within three minutes is not fetched again), 24 hours on disk.
///
/// For example:
///
/// ```swift
/// struct CityListAPI: API {
///     // …
///     var cachePolicy: CachePolicy { .memoryAndDisk(staleIfOffline: true) }
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

    public init(tiers: Tiers, memoryLifetime: Duration = .seconds(180), diskLifetime: Duration = .seconds(86_400), staleIfOffline: Bool = false) {
        self.tiers = tiers
        self.memoryLifetime = memoryLifetime
        self.diskLifetime = diskLifetime
        self.staleIfOffline = staleIfOffline
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
}

/// Where a delivered response came from.
public enum ResponseOrigin: Sendable, Hashable {
    /// Fetched from the network for this load.
    case network
    /// Answered by a cache tier; `age` is the time since it was fetched; `isStale` marks an
    /// expired entry delivered because the network was unreachable.
    case cache(tier: CacheTier, age: Duration, isStale: Bool)

    /// Whether a cache answered.
    public var isCached: Bool {
        if case .cache = self { return true }
        return false
    }
}

/// A cache tier.
public enum CacheTier: String, Sendable, Hashable {
    case memory
    case disk
}
