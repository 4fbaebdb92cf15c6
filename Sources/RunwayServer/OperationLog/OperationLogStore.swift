/// Where a collector keeps events: each event once, by its identifier, a batch in one
/// transaction.
///
/// Two implementations: ``SQLiteOperationLogStore`` (embedded, one process) and
/// ``PostgresOperationLogStore`` (several stateless collector processes on one database).
public protocol OperationLogStore: Sendable {
    /// Stores `events` in one transaction; identifiers already stored are not stored again.
    ///
    /// - returns: How many of `events` were new and how many were already stored.
    /// - throws: ``OperationLogStoreError/refused(reason:)`` when the database refuses a value
    ///   (nothing stored; the collector then stores the events one by one); anything else when
    ///   the store is unavailable.
    func store(_ events: [CollectedEvent]) async throws -> StoredBatch
    /// What the store holds: every event counted, and the names of one page of the counts by
    /// name, most frequent first — `limit` of them from the `offset`th. The grouping is the
    /// database's; only the page is held in memory.
    func summary(limit: Int, offset: Int) async throws -> CollectorSummary
    /// Returns when the database answers a query; throws when it does not (`/ready`).
    func checkReachable() async throws
    /// The identifiers of every stored event (for audits and tests; not for large stores).
    func allEventIDs() async throws -> [String]
    /// Every stored event's ``CollectedEvent/clockOffsetMilliseconds``, by identifier (for
    /// audits and tests; not for large stores).
    func clockOffsets() async throws -> [String: Int64?]
}

extension OperationLogStore {
    /// What the store holds, every name counted (for audits and tests; not for large stores).
    public func summary() async throws -> CollectorSummary {
        try await summary(limit: Int(Int32.max), offset: 0)
    }
}

/// What storing one batch did.
public struct StoredBatch: Sendable, Hashable {
    /// Events stored now.
    public var new: Int
    /// Events stored before (a batch sent again).
    public var duplicates: Int

    /// Creates the outcome.
    public init(new: Int, duplicates: Int) {
        self.new = new
        self.duplicates = duplicates
    }
}

/// What a collector's store holds.
public struct CollectorSummary: Sendable, Hashable {
    /// Events stored.
    public var events: Int
    /// Event counts by name, most frequent first.
    public var byName: [(name: String, count: Int)]

    /// Creates a summary.
    public init(events: Int, byName: [(name: String, count: Int)]) {
        self.events = events
        self.byName = byName
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.events == rhs.events && lhs.byName.elementsEqual(rhs.byName) { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(events)
        for entry in byName {
            hasher.combine(entry.name)
            hasher.combine(entry.count)
        }
    }
}
