import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

@Suite("LRU with count and cost limits", .timeLimit(.minutes(10)))
struct LRUCacheTests {
    @Test("the least recently used entry goes first when the count limit is passed")
    func countLimit() {
        var lru = LRUCache<String, Int>(countLimit: 3, costLimit: 1000)
        lru.set(1, for: "a", cost: 1)
        lru.set(2, for: "b", cost: 1)
        lru.set(3, for: "c", cost: 1)
        #expect(lru.value(for: "a") == 1)  // a is now the most recent
        #expect(lru.set(4, for: "d", cost: 1) == ["b"])
        #expect(lru.keysByRecency == ["d", "a", "c"])
        #expect(lru.peek("b") == nil)
    }

    @Test("the cost limit evicts from the old end until the total fits; an oversized value is not kept")
    func costLimit() {
        var lru = LRUCache<String, Int>(countLimit: 100, costLimit: 10)
        lru.set(1, for: "a", cost: 4)
        lru.set(2, for: "b", cost: 4)
        #expect(lru.set(3, for: "c", cost: 5) == ["a"])
        #expect(lru.totalCost == 9)
        #expect(lru.set(9, for: "huge", cost: 11).isEmpty)
        #expect(lru.peek("huge") == nil)
        #expect(lru.count == 2)
    }

    @Test("replacing, removing and removing by predicate keep the books straight")
    func bookkeeping() {
        var lru = LRUCache<String, Int>(countLimit: 10, costLimit: 100)
        for (index, key) in ["a", "b", "c", "d"].enumerated() { lru.set(index, for: key, cost: 10) }
        lru.set(42, for: "b", cost: 30)
        #expect(lru.totalCost == 60)
        #expect(lru.keysByRecency == ["b", "d", "c", "a"])
        #expect(lru.removeValue(for: "d") == 3)
        lru.removeAll { $0 == 0 }
        #expect(lru.keysByRecency == ["b", "c"])
        #expect(lru.totalCost == 40)
        // Slots are reused after removals.
        for index in 0..<20 { lru.set(index, for: "k\(index)", cost: 1) }
        #expect(lru.count == 10)
    }
}
