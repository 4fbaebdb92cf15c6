import Foundation
import HTTPTypes
public import Logging
public import RunwayStorage

/// Runway's response cache: a memory tier over a disk tier, asked before the network.
///
/// Give it to an ``Engine``; APIs opt in with their ``API/cachePolicy``. Lookups go memory, then
/// disk (a disk hit is promoted to memory), then network. A cache hit is landed like a network
/// response — the API's response validator runs, interceptors and delegates see it the same way —
/// and ``RawResponse/origin`` tells which tier answered and how old the data is.
///
/// For example:
///
/// ```swift
/// let cache = try ResponseCache(container: Container(.system(appName: "com.acme.homes")))
/// let engine = Engine(transport: URLSessionTransport(), cache: cache)
/// // on logout:
/// cache.removeEntries(sensitiveComponent: userID)
/// ```
public final class ResponseCache: Sendable {
    /// How much each tier keeps, and where a body is stored.
    public struct Limits: Sendable {
        /// Entries kept in memory at most.
        public var memoryCountLimit: Int
        /// Bytes kept in memory at most.
        public var memoryCostLimit: Int
        /// Bytes on disk at most; past it, least recently used entries are trimmed to
        /// ``diskTrimRatio`` of it in the background.
        public var diskSizeLimit: Int64
        /// What a trim brings the disk tier down to, as a share of the limit.
        public var diskTrimRatio: Double
        /// Bodies up to this size are stored inside the database, larger ones as files. Default
        /// 16 KB, the largest size at which reads from SQLite beat reads of a file in every run
        /// (*Cache tiers* in `Benchmarks/README.md`, `runway bench --suite cache`).
        public var inlineThreshold: Int

        public init(
            memoryCountLimit: Int = 500, memoryCostLimit: Int = 16 << 20, diskSizeLimit: Int64 = 50 << 20,
            diskTrimRatio: Double = 0.7, inlineThreshold: Int = 16 << 10
        ) {
            self.memoryCountLimit = memoryCountLimit
            self.memoryCostLimit = memoryCostLimit
            self.diskSizeLimit = diskSizeLimit
            self.diskTrimRatio = diskTrimRatio
            self.inlineThreshold = inlineThreshold
        }

        /// The disk tier's share of these limits.
        var disk: DiskCache.Limits {
            DiskCache.Limits(sizeLimit: diskSizeLimit, trimRatio: diskTrimRatio, inlineThreshold: inlineThreshold)
        }
    }

    let memory: MemoryCache
    let disk: DiskCache?
    let now: @Sendable () -> Date
    let logger: Logger
    /// Bumped by every removal; a load that began before one does not store its answer
    /// afterwards (it may belong to the user who just logged out). Held while writing the memory
    /// tier; a queued disk write checks it again when it runs, and the disk removal is queued
    /// behind it.
    private let generation = Locked(0)
    /// Where a test steps into a lookup's disk read.
    struct DiskReadHooks {
        /// Runs on the lookup's thread once it has chosen to read the disk, before the read is
        /// queued: where a test lets a held opening go, knowing the lookup is waiting for it.
        var before: (@Sendable () -> Void)?
        /// Runs on the disk queue right after the read: where a test puts a removal that races it.
        var after: (@Sendable () -> Void)?
    }

    let diskReadHooks = Locked(DiskReadHooks())

    /// Creates a cache; with a `container`, its disk tier lives in the container's caches role.
    ///
    /// - parameters:
    ///   - container: Where the disk tier lives; `nil` keeps a memory tier only.
    ///   - limits: How much each tier keeps, and where a body is stored.
    ///   - now: The clock for ages and expiry; replace it in tests.
    ///   - logger: Where recoveries and unavailable features are reported.
    /// - throws: When the disk tier can be neither opened nor made again.
    public init(
        container: Container? = nil, limits: Limits = Limits(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "runway.cache")
    ) throws {
        memory = MemoryCache(countLimit: limits.memoryCountLimit, costLimit: limits.memoryCostLimit)
        disk = try container.map { try DiskCache(container: $0, limits: limits.disk, logger: logger) }
        self.now = now
        self.logger = logger
    }

    /// Creates a cache at once, without waiting for the disk: its disk tier in `container`'s
    /// caches role opens in the background. What a launch makes its engine with: the engine is
    /// made without waiting for SQLite, and so is the first load of a first launch. On the
    /// caller's thread it only asks whether the database file exists (one `stat`).
    ///
    /// Until the disk tier is open, lookups that need it wait for it (on its own queue, never on
    /// a thread of the caller's) — except while it is being made for the first time: with no file
    /// there yet it holds nothing, so a lookup goes on to the network without waiting. Writes and
    /// removals queue behind the opening. When the opening fails the cache keeps its memory tier
    /// only, logs the error, and ``waitForDiskTier()`` throws it.
    ///
    /// ```swift
    /// let cache = ResponseCache(openingInBackground: container)  // returns at once
    /// let engine = Engine(transport: URLSessionTransport(), cache: cache)
    /// ```
    ///
    /// - parameters:
    ///   - container: Where the disk tier lives.
    ///   - limits: How much each tier keeps, and where a body is stored.
    ///   - now: The clock for ages and expiry; replace it in tests.
    ///   - logger: Where recoveries, a failed opening and unavailable features are reported.
    public convenience init(
        openingInBackground container: Container, limits: Limits = Limits(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "runway.cache")
    ) {
        self.init(openingInBackground: container, limits: limits, now: now, logger: logger, beforeOpening: nil)
    }

    /// ``init(openingInBackground:limits:now:logger:)``, with `beforeOpening` run on the disk
    /// queue before the opening: where a test holds it.
    init(
        openingInBackground container: Container, limits: Limits = Limits(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "runway.cache"),
        beforeOpening: (@Sendable () -> Void)?
    ) {
        memory = MemoryCache(countLimit: limits.memoryCountLimit, costLimit: limits.memoryCostLimit)
        disk = DiskCache(openingInBackground: container, limits: limits.disk, logger: logger, beforeOpening: beforeOpening)
        self.now = now
        self.logger = logger
    }

    /// Waits until the disk tier is open (and any disk work queued before this call is done).
    ///
    /// - throws: What the opening of a tier opened in the background met
    ///   (``init(openingInBackground:limits:now:logger:)``); such a cache keeps its memory tier
    ///   only.
    public func waitForDiskTier() async throws {
        guard let disk else { return }
        await disk.waitForQueuedWork()
        if let error = disk.openingError { throw error }
    }

    // MARK: Management

    /// Empties the memory tier: what to do under memory pressure. The disk tier stays.
    public func purge() { memory.removeAll() }

    /// Removes every entry of both tiers. Loads in flight do not store their answers.
    ///
    /// The memory tier is emptied at once; the disk tier on its queue, before any later lookup
    /// reads it (``waitForDiskWork()`` waits for it).
    public func removeAll() {
        removing({ memory.removeAll() }, disk: { $0.removeAll() })
    }

    /// Removes every entry of the API named `apiName` (its ``API/name``). Loads in flight do not
    /// store their answers.
    public func removeEntries(forAPI apiName: String) {
        removing({ memory.removeAll { $0.apiName == apiName } }, disk: { $0.removeAll(api: apiName) })
    }

    /// Removes every entry stored under `component` (``CachePolicy/sensitiveComponent``): on logout.
    /// Loads in flight do not store their answers, so nothing of the old user comes back.
    public func removeEntries(sensitiveComponent component: String) {
        removing(
            { memory.removeAll { $0.sensitiveComponent == component } },
            disk: { $0.removeAll(sensitiveComponent: component) })
    }

    /// Bumps the generation and empties memory under the lock (so no store slips in between), and
    /// queues the disk removal behind every disk write already queued.
    private func removing(_ inMemory: () -> Void, disk removal: @escaping @Sendable (DiskCache) -> Void) {
        generation.withLock { generation in
            generation += 1
            inMemory()
            if let disk { disk.queue.async { removal(disk) } }
        }
    }

    /// Waits until every disk write and removal queued so far has reached the disk: before
    /// reading the disk tier's files directly, or when the app is about to be suspended.
    public func waitForDiskWork() async {
        await disk?.waitForQueuedWork()
    }

    /// The removal generation now: pass it to ``store(_:key:api:policy:generation:)``.
    var currentGeneration: Int { generation.withLock { $0 } }

    /// Entries in memory and bytes they hold.
    public var memoryUsage: (count: Int, bytes: Int) { (memory.count, memory.totalCost) }

    /// Bytes the disk tier holds.
    public var diskUsage: Int64 { disk?.size ?? 0 }

    // MARK: Lookup and store

    /// A hit: the entry, the tier, and whether it is expired.
    struct Hit {
        var entry: CachedEntry
        var tier: CacheTier
        var isExpired: Bool

        /// The stored response's `Cache-Control`.
        var control: CacheControl { CacheControl(entry.headers) }

        /// The conditional fields that ask the server whether the entry is still current
        /// (RFC 9110 §13.1): `If-None-Match` from its `ETag`, `If-Modified-Since` from its
        /// `Last-Modified`. Empty when it has neither.
        var conditions: HTTPFields {
            var fields = HTTPFields()
            if let tag = entry.headers[.eTag] { fields[.ifNoneMatch] = tag }
            if let modified = entry.headers[.lastModified] { fields[.ifModifiedSince] = modified }
            return fields
        }

        /// How long the entry has been stale at `now`; zero while fresh.
        func staleness(at now: Date) -> TimeInterval { max(0, now.timeIntervalSince(entry.expiresAt)) }
    }

    /// Memory, then disk (promoting a disk hit). Expired entries are returned only with
    /// `allowExpired` (to revalidate, or to stand in when the server cannot answer). The disk is
    /// read on its own queue: the caller suspends, and no thread of the cooperative pool waits
    /// for SQLite. An entry whose response's `Vary` names fields this request has other values
    /// of is no hit.
    ///
    /// With `parsesJSON` (an API whose format is JSON), a fresh disk hit is parsed here, once, and
    /// promoted to memory with its tree, so later memory hits parse nothing.
    func lookup(_ key: CacheKey, policy: CachePolicy, allowExpired: Bool, parsesJSON: Bool = false) async -> Hit? {
        let now = self.now()
        if let entry = memory.entry(key.hash), Self.answers(entry, key) {
            if entry.expiresAt > now { return Hit(entry: entry, tier: .memory, isExpired: false) }
            // Stale here stands for the entry unless the disk tier holds a longer-lived copy.
            if allowExpired, policy.tiers == .memory || disk == nil { return Hit(entry: entry, tier: .memory, isExpired: true) }
        }
        guard policy.tiers == .memoryAndDisk, let disk, !disk.holdsNothingYet else { return nil }
        let hash = key.hash
        // Read before the disk: a removal that lands while the disk is read must not see the
        // entry put back in memory by the promotion below.
        let readGeneration = currentGeneration
        let hooks = diskReadHooks.withLock { $0 }
        hooks.before?()
        guard var entry = await disk.onQueue({ () -> CachedEntry? in
            defer { hooks.after?() }
            return disk.entry(hash, now: now)
        }), Self.answers(entry, key) else { return nil }
        let fresh = entry.expiresAt > now
        // A stale entry may never be delivered (refetched, or answered by a 200): landing
        // parses it if it is.
        if parsesJSON, fresh, !entry.body.isEmpty { entry.json = try? JSON(parsing: entry.body) }
        if fresh {
            var promoted = entry
            promoted.expiresAt = min(entry.expiresAt, now.addingTimeInterval(policy.memoryLifetime.seconds))
            generation.withLock { current in
                if current == readGeneration { memory.store(promoted) }
            }
        }
        guard fresh || allowExpired else { return nil }
        return Hit(entry: entry, tier: .disk, isExpired: !fresh)
    }

    /// Whether `entry` may answer a request with `key`'s fields (its `Vary`).
    private static func answers(_ entry: CachedEntry, _ key: CacheKey) -> Bool {
        entry.variant == nil && !entry.headers.contains(.vary) ? true
            : CacheVariant.matches(stored: entry.variant, headers: entry.headers, request: key.requestFields)
    }

    /// A fresh entry of the memory tier, without touching the disk: what a new network flight
    /// checks first, because a load that missed the cache while an earlier flight for the same
    /// key was ending finds that flight's answer here (it is stored before the flight ends).
    func freshInMemory(_ key: CacheKey) -> Hit? {
        guard let entry = memory.entry(key.hash), entry.expiresAt > now(), Self.answers(entry, key) else { return nil }
        return Hit(entry: entry, tier: .memory, isExpired: false)
    }

    /// Keeps a successful response in the tiers the policy names, unless a removal happened
    /// since `generation` was read (when the load began).
    ///
    /// The memory tier is written at once; the disk write is queued on the disk queue, so the
    /// load's waiters are answered without waiting for SQLite or the file system. A removal
    /// queued meanwhile runs after it; one that began before it runs makes it a no-op.
    func store(_ response: RawResponse, key: CacheKey, api: some API, policy: CachePolicy, generation expected: Int) {
        guard policy.tiers != .none else { return }
        generation.withLock { current in
            guard current == expected else { return }
            keep(response, key: key, api: api, policy: policy, generation: expected)
        }
    }

    /// Header fields a cached answer never keeps: those that set or ask for a credential (a
    /// replayed `Set-Cookie` would sign a later user in as an earlier one) and those that describe
    /// the connection the answer came on, not the answer.
    static let neverStored: Set<HTTPField.Name> = Set(
        [
            "Set-Cookie", "Set-Cookie2", "WWW-Authenticate", "Proxy-Authenticate", "Authentication-Info",
            "Proxy-Authentication-Info", "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE",
            "Trailer", "Upgrade",
        ].compactMap { HTTPField.Name($0) })

    /// Keeps `response` as the server allows (``Freshness``): never a `no-store` or `Vary: *`
    /// answer; fresh in each tier for the API's lifetime there, capped by the server's.
    private func keep(_ response: RawResponse, key: CacheKey, api: some API, policy: CachePolicy, generation expected: Int) {
        let now = self.now()
        let received = response.response.headerFields
        let freshness = Freshness(headers: received, arrivedAt: now)
        guard freshness.mayStore(received) else { return }
        var headers = HTTPFields()
        for field in received where !Self.neverStored.contains(field.name) { headers.append(field) }
        let entry = CachedEntry(
            key: key.hash, status: response.status.code, headers: headers, body: response.body, json: response.json,
            storedAt: now,
            expiresAt: freshness.expiry(arrivedAt: now, ceiling: policy.memoryLifetime, mode: policy.freshness),
            apiName: api.name, sensitiveComponent: policy.sensitiveComponent, url: response.url?.absoluteString,
            variant: CacheVariant.text(for: CacheVariant.names(in: received), request: key.requestFields))
        memory.store(entry)
        if policy.tiers == .memoryAndDisk, let disk {
            var onDisk = entry
            onDisk.json = nil
            onDisk.expiresAt = freshness.expiry(arrivedAt: now, ceiling: policy.diskLifetime, mode: policy.freshness)
            let generation = self.generation
            let queued = onDisk
            disk.queue.async {
                guard generation.withLock({ $0 }) == expected else { return }
                disk.store(queued, now: now)
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
