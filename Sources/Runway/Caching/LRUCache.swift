/// A least-recently-used map with a count limit and a cost limit: O(1) get, set and remove.
///
/// A dictionary from key to slot, and a doubly linked list threaded through an array of slots
/// (indices, not objects, so no reference counting per node). Not thread-safe by itself;
/// ``MemoryCache`` puts it behind a lock.
struct LRUCache<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        var cost: Int
        var newer: Int?
        var older: Int?
    }

    let countLimit: Int
    let costLimit: Int
    private var index: [Key: Int] = [:]
    private var slots: [Slot?] = []
    private var free: [Int] = []
    private var newest: Int?
    private var oldest: Int?
    private(set) var totalCost = 0

    init(countLimit: Int, costLimit: Int) {
        self.countLimit = max(1, countLimit)
        self.costLimit = max(1, costLimit)
    }

    var count: Int { index.count }

    /// The value of `key`, marked most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let position = index[key], let slot = slots[position] else { return nil }
        moveToNewest(position)
        return slot.value
    }

    /// The value of `key` without touching its recency.
    func peek(_ key: Key) -> Value? {
        index[key].flatMap { slots[$0]?.value }
    }

    /// Stores `value` as most recently used; evicts the least recently used entries while a
    /// limit is exceeded. A value costing more than the whole cost limit is not stored.
    ///
    /// - returns: The keys evicted.
    @discardableResult
    mutating func set(_ value: Value, for key: Key, cost: Int) -> [Key] {
        removeValue(for: key)
        guard cost <= costLimit else { return [] }
        let slot = Slot(key: key, value: value, cost: cost, newer: nil, older: newest)
        let position: Int
        if let reused = free.popLast() {
            slots[reused] = slot
            position = reused
        } else {
            slots.append(slot)
            position = slots.count - 1
        }
        if let newest { slots[newest]?.newer = position }
        newest = position
        if oldest == nil { oldest = position }
        index[key] = position
        totalCost += cost
        var evicted: [Key] = []
        while index.count > countLimit || totalCost > costLimit, let victim = oldest, victim != position {
            if let key = slots[victim]?.key {
                evicted.append(key)
                removeValue(for: key)
            }
        }
        return evicted
    }

    /// Removes `key`.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let position = index.removeValue(forKey: key), let slot = slots[position] else { return nil }
        unlink(position, slot)
        slots[position] = nil
        free.append(position)
        totalCost -= slot.cost
        return slot.value
    }

    /// Removes every entry whose value matches.
    mutating func removeAll(where matches: (Value) -> Bool) {
        for (key, position) in index where slots[position].map({ matches($0.value) }) == true {
            removeValue(for: key)
        }
    }

    mutating func removeAll() {
        index.removeAll()
        slots.removeAll()
        free.removeAll()
        newest = nil
        oldest = nil
        totalCost = 0
    }

    /// Keys from most to least recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = newest
        while let position = cursor, let slot = slots[position] {
            keys.append(slot.key)
            cursor = slot.older
        }
        return keys
    }

    private mutating func unlink(_ position: Int, _ slot: Slot) {
        if let newer = slot.newer { slots[newer]?.older = slot.older } else { newest = slot.older }
        if let older = slot.older { slots[older]?.newer = slot.newer } else { oldest = slot.newer }
    }

    private mutating func moveToNewest(_ position: Int) {
        guard newest != position, let slot = slots[position] else { return }
        unlink(position, slot)
        slots[position]?.newer = nil
        slots[position]?.older = newest
        if let newest { slots[newest]?.newer = position }
        newest = position
        if oldest == nil { oldest = position }
    }
}
