/// A least-recently-used map with a count limit and a cost limit: O(1) get, set and remove.
///
/// A dictionary from key to slot, and a doubly linked list threaded through an array of links
/// (indices, not objects, so no reference counting per node). Values live in an array of their
/// own: marking an entry recently used rewrites four integers and never copies the value (a
/// cached response holds half a dozen references, each copy a retain and a release).
/// Not thread-safe by itself; ``MemoryCache`` puts it behind a lock.
struct LRUCache<Key: Hashable, Value> {
    private struct Entry {
        var key: Key
        var value: Value
        var cost: Int
    }

    /// Neighbours in recency order; `none` at either end.
    private struct Link {
        var newer: Int
        var older: Int
    }

    private static var none: Int { -1 }

    let countLimit: Int
    let costLimit: Int
    private var index: [Key: Int] = [:]
    private var entries: [Entry?] = []
    private var links: [Link] = []
    private var free: [Int] = []
    private var newest = LRUCache.none
    private var oldest = LRUCache.none
    private(set) var totalCost = 0

    init(countLimit: Int, costLimit: Int) {
        self.countLimit = max(1, countLimit)
        self.costLimit = max(1, costLimit)
    }

    var count: Int { index.count }

    /// The value of `key`, marked most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let position = index[key] else { return nil }
        moveToNewest(position)
        return entries[position]?.value
    }

    /// The value of `key` without touching its recency.
    func peek(_ key: Key) -> Value? {
        index[key].flatMap { entries[$0]?.value }
    }

    /// Stores `value` as most recently used; evicts the least recently used entries while a
    /// limit is exceeded. A value costing more than the whole cost limit is not stored.
    ///
    /// - returns: The keys evicted.
    @discardableResult
    mutating func set(_ value: Value, for key: Key, cost: Int) -> [Key] {
        if let position = index[key] {
            guard cost <= costLimit else {
                removeValue(for: key)
                return []
            }
            totalCost += cost - (entries[position]?.cost ?? 0)
            entries[position] = Entry(key: key, value: value, cost: cost)
            moveToNewest(position)
        } else {
            guard cost <= costLimit else { return [] }
            let position: Int
            if let reused = free.popLast() {
                entries[reused] = Entry(key: key, value: value, cost: cost)
                links[reused] = Link(newer: Self.none, older: Self.none)
                position = reused
            } else {
                entries.append(Entry(key: key, value: value, cost: cost))
                links.append(Link(newer: Self.none, older: Self.none))
                position = entries.count - 1
            }
            pushNewest(position)
            index[key] = position
            totalCost += cost
        }
        return evict(keeping: index[key] ?? Self.none)
    }

    /// Removes least recently used entries, never `kept`, while a limit is exceeded.
    private mutating func evict(keeping kept: Int) -> [Key] {
        var evicted: [Key] = []
        while index.count > countLimit || totalCost > costLimit, oldest != Self.none, oldest != kept {
            guard let key = entries[oldest]?.key else { break }
            evicted.append(key)
            removeValue(for: key)
        }
        return evicted
    }

    /// Removes `key`.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let position = index.removeValue(forKey: key), let entry = entries[position] else { return nil }
        unlink(position)
        entries[position] = nil
        free.append(position)
        totalCost -= entry.cost
        return entry.value
    }

    /// Removes every entry whose value matches.
    mutating func removeAll(where matches: (Value) -> Bool) {
        for (key, position) in index where entries[position].map({ matches($0.value) }) == true {
            removeValue(for: key)
        }
    }

    mutating func removeAll() {
        index.removeAll()
        entries.removeAll()
        links.removeAll()
        free.removeAll()
        newest = Self.none
        oldest = Self.none
        totalCost = 0
    }

    /// Keys from most to least recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = newest
        while cursor != Self.none, let key = entries[cursor]?.key {
            keys.append(key)
            cursor = links[cursor].older
        }
        return keys
    }

    private mutating func unlink(_ position: Int) {
        let link = links[position]
        if link.newer != Self.none { links[link.newer].older = link.older } else { newest = link.older }
        if link.older != Self.none { links[link.older].newer = link.newer } else { oldest = link.newer }
        links[position] = Link(newer: Self.none, older: Self.none)
    }

    private mutating func pushNewest(_ position: Int) {
        links[position] = Link(newer: Self.none, older: newest)
        if newest != Self.none { links[newest].newer = position }
        newest = position
        if oldest == Self.none { oldest = position }
    }

    private mutating func moveToNewest(_ position: Int) {
        guard newest != position else { return }
        unlink(position)
        pushNewest(position)
    }
}
