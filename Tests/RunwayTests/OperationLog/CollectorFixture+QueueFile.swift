import GRDB
import RunwayTestSupport

extension CollectorFixture {
    /// Runs `sql` on the log's queue file while no log has it open: a file changed behind the
    /// app's back (tampered with, or left by another boot).
    func alterQueueFile(_ sql: String, arguments: StatementArguments = StatementArguments()) async throws {
        let url = try container.url(for: "operation-log/queue.sqlite", in: .applicationSupport)
        let file = try DatabaseQueue(path: url.path)
        try await file.write { db in try db.execute(sql: sql, arguments: arguments) }
        try file.close()
    }

    /// Records `count` events committed and closes the log: what the next launch finds queued
    /// (batches of 30 and an hour's maximum age keep them waiting). Returns their ids.
    func queueAndClose(_ count: Int) async throws -> [String] {
        let (log, _) = try openLog()
        var ids: [String] = []
        for index in 0..<count { ids.append(try await log.recordCommitted("tap", payload: ["n": .int(index)])) }
        await log.close()
        return ids
    }
}
