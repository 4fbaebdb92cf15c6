import Foundation

/// The memory tier: an LRU with a count limit, a cost limit (bytes) and per-entry expiry, safe to
/// use from any isolation domain.
@_spi(Benchmarks) public final class MemoryCache: Sendable {
    private let lru: Locked<LRUCache<String, CachedEntry>>

    @_spi(Benchmarks) public init(countLimit: Int, costLimit: Int) {
        lru = Locked(LRUCache(countLimit: countLimit, costLimit: costLimit))
    }

    /// The entry of `key`, fresh or not (the caller decides what an expired one is good for).
    @_spi(Benchmarks) public func entry(_ key: String) -> CachedEntry? { lru.withLock { $0.value(for: key) } }

    @_spi(Benchmarks) public func store(_ entry: CachedEntry) {
        lru.withLock { _ = $0.set(entry, for: entry.key, cost: entry.cost) }
    }

    func remove(_ key: String) { lru.withLock { _ = $0.removeValue(for: key) } }

    func removeAll(where matches: (CachedEntry) -> Bool) { lru.withLock { $0.removeAll(where: matches) } }

    func removeAll() { lru.withLock { $0.removeAll() } }

    var count: Int { lru.withLock { $0.count } }
    var totalCost: Int { lru.withLock { $0.totalCost } }
}
