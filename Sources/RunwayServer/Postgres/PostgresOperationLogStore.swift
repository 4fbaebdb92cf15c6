import Foundation
import PostgresNIO

/// The collector store for several stateless collector processes: one PostgreSQL table, each
/// batch one `INSERT … ON CONFLICT (event_id) DO NOTHING` (one statement, one transaction).
public final class PostgresOperationLogStore: OperationLogStore {
    private let database: PostgresCollectorDatabase

    /// A store over `database`, whose tables ``PostgresCollectorDatabase/connect(_:logger:)`` made.
    public init(database: PostgresCollectorDatabase) { self.database = database }

    /// - throws: ``OperationLogStoreError/refused(reason:)`` when PostgreSQL refuses a value
    ///   (SQLSTATE class 22, a data exception such as `\u0000` in `jsonb`, or 23, an integrity
    ///   constraint); nothing of the batch is stored then.
    public func store(_ events: [CollectedEvent]) async throws -> StoredBatch {
        guard !events.isEmpty else { return StoredBatch(new: 0, duplicates: 0) }
        let ids = events.map(\.id)
        let names = events.map(\.name)
        let times = events.map(\.timeMilliseconds)
        let payloads = events.map { String(decoding: $0.payload, as: UTF8.self) }
        // PostgresNIO binds no arrays of optionals: Int64.min stands for "not said" and becomes NULL.
        let offsets = events.map { $0.clockOffsetMilliseconds ?? .min }
        do {
            let rows = try await database.client.query(
                """
                INSERT INTO collected_event (event_id, name, time_ms, payload, clock_offset_ms)
                SELECT id, name, time_ms, payload::jsonb, NULLIF(clock_offset_ms, \(Int64.min))
                FROM unnest(\(ids)::text[], \(names)::text[], \(times)::int8[], \(payloads)::text[], \(offsets)::int8[])
                    AS t(id, name, time_ms, payload, clock_offset_ms)
                ON CONFLICT (event_id) DO NOTHING
                RETURNING 1
                """, logger: database.logger)
            var new = 0
            for try await _ in rows { new += 1 }
            return StoredBatch(new: new, duplicates: events.count - new)
        } catch let error as PSQLError {
            guard let state = error.serverInfo?[.sqlState], state.hasPrefix("22") || state.hasPrefix("23") else { throw error }
            throw OperationLogStoreError.refused(reason: error.serverInfo?[.message] ?? state)
        }
    }

    public func clockOffsets() async throws -> [String: Int64?] {
        let rows = try await database.client.query(
            "SELECT event_id, clock_offset_ms FROM collected_event", logger: database.logger)
        var offsets: [String: Int64?] = [:]
        for try await (id, offset) in rows.decode((String, Int64?).self) { offsets[id] = offset }
        return offsets
    }

    public func summary(limit: Int, offset: Int) async throws -> CollectorSummary {
        var total = 0
        for try await count in try await database.client.query(
            "SELECT count(*)::BIGINT FROM collected_event", logger: database.logger
        ).decode(Int64.self) {
            total = Int(count)
        }
        let rows = try await database.client.query(
            """
            SELECT name, count(*) AS n FROM collected_event GROUP BY name ORDER BY n DESC, name
            LIMIT \(Int64(max(limit, 0))) OFFSET \(Int64(max(offset, 0)))
            """, logger: database.logger)
        var byName: [(name: String, count: Int)] = []
        for try await (name, count) in rows.decode((String, Int64).self) { byName.append((name, Int(count))) }
        return CollectorSummary(events: total, byName: byName)
    }

    public func checkReachable() async throws {
        try await database.client.query("SELECT 1", logger: database.logger)
    }

    public func allEventIDs() async throws -> [String] {
        let rows = try await database.client.query("SELECT event_id FROM collected_event", logger: database.logger)
        var ids: [String] = []
        for try await (id) in rows.decode(String.self) { ids.append(id) }
        return ids
    }
}
