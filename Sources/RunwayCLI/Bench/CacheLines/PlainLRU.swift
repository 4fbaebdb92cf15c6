@_spi(Benchmarks) import Runway
import Synchronization

// Compiled twice: here for `runway bench --suite cache`, and in the benchmark package through
// the link Benchmarks/Benchmarks/RunwayBenchmarks/CacheLines, so both measure the same lines.

/// The limit a memory tier is measured against: a dictionary from key to node, a doubly linked
/// list of nodes for recency, one `Mutex`, a count limit — and nothing else.
final class PlainLRU: Sendable {
    final class Node {
        let key: String
        var value: CachedEntry
        var newer: Node?
        unowned(unsafe) var older: Node?

        init(key: String, value: CachedEntry) {
            self.key = key
            self.value = value
        }
    }

    struct State {
        var nodes: [String: Node] = [:]
        var newest: Node?
        var oldest: Node?
    }

    let limit: Int
    let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    func value(for key: String) -> CachedEntry? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            Self.unlink(node, &state)
            Self.pushNewest(node, &state)
            return node.value
        }
    }

    func set(_ value: CachedEntry, for key: String) {
        state.withLock { state in
            if let node = state.nodes[key] {
                node.value = value
                Self.unlink(node, &state)
                Self.pushNewest(node, &state)
                return
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            Self.pushNewest(node, &state)
            if state.nodes.count > limit, let victim = state.oldest {
                Self.unlink(victim, &state)
                state.nodes[victim.key] = nil
            }
        }
    }

    private static func unlink(_ node: Node, _ state: inout State) {
        if let newer = node.newer { newer.older = node.older } else { state.newest = node.older }
        if let older = node.older { older.newer = node.newer } else { state.oldest = node.newer }
        node.newer = nil
        node.older = nil
    }

    private static func pushNewest(_ node: Node, _ state: inout State) {
        node.older = state.newest
        state.newest?.newer = node
        state.newest = node
        if state.oldest == nil { state.oldest = node }
    }
}
