/// The demo's orders as the server applied them: one row per client and `Idempotency-Key`,
/// numbered in the order they arrived, so that "applied once, in order" can be read from the
/// server's own count.
///
/// The key is stored with the order in one statement: an order whose answer was lost to a
/// killed process, and whose key's lease ran out, is found again, not applied twice. Keys are
/// the client's, as the idempotency middleware scopes them: another client's order under the
/// same key is another order.
public protocol OrderLedger: Sendable {
    /// Applies the order `key` of `client` (a digest of who sent it) in `queue` (its `position`
    /// in the queue, as the client numbered it), unless that client's key was applied before.
    ///
    /// - returns: The order's number on the server, and whether this call applied it.
    func apply(client: String, key: String, queue: String, position: Int64) async throws -> (number: Int64, applied: Bool)

    /// Every applied order, by number.
    func orders() async throws -> [AppliedOrder]
}

/// One applied order.
public struct AppliedOrder: Sendable, Hashable {
    public var number: Int64
    public var key: String
    public var queue: String
    public var position: Int64

    public init(number: Int64, key: String, queue: String, position: Int64) {
        self.number = number
        self.key = key
        self.queue = queue
        self.position = position
    }
}
