import Foundation
import GRDB
import HTTPTypes
import Logging
import RunwayStorage

/// The outbox on disk: a ``QueueDatabase`` in its own folder of application support, one row
/// per item, in the order they were enqueued.
///
/// An item stays until its answer is final. Each row carries the outbox's sign-in generation it
/// was made under (``meta`` `signin`, raised by every reset of the authentication and kept
/// across launches), its failed tries and, on the ``BootClock``, when it may be tried again.
final class OutboxStore: Sendable {
    /// A stored item, ready to send.
    struct Stored: Sendable {
        var seq: Int64
        var item: OutboxItem
        var request: OutboxRequest
        var signIn: Int64
        var attempts: Int
        var notBefore: Int64?
    }

    /// A row that cannot be read as an item (a damaged or tampered file): what could be read of it.
    struct Unreadable: Error, Sendable {
        var seq: Int64
        /// The item, named by what could be read of the fields that name it
        /// (``OutboxItem/unreadableID(row:)`` for an identity that could not).
        var item: OutboxItem
        /// Which field could not be read, and why.
        var reason: String
    }

    /// The first item of each queue: those ready to send, and the rows that cannot be read.
    struct Heads: Sendable {
        var ready: [Stored] = []
        var unreadable: [Unreadable] = []
    }

    static let folder = "outbox"

    let pool: DatabasePool
    let url: URL

    init(container: Container, name: String, logger: Logger) throws(OutboxError) {
        do {
            (pool, url) = try QueueDatabase.open(
                folder: Self.folder, name: name, container: container, what: "outbox", logger: logger,
                schema: Self.schema
            ) { db in
                // Waits measured in another boot mean nothing now: every item is due.
                try db.execute(sql: "UPDATE item SET not_before_ms = NULL")
            }
        } catch {
            throw .storage(reason: "\(error)")
        }
    }

    private static let schema = """
                CREATE TABLE item (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    queue TEXT NOT NULL,
                    signin INTEGER NOT NULL,
                    service TEXT NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    name TEXT NOT NULL,
                    encoding TEXT NOT NULL,
                    headers BLOB NOT NULL,
                    timeout_ms INTEGER NOT NULL,
                    params BLOB NOT NULL,
                    body BLOB,
                    content_type TEXT,
                    bytes INTEGER NOT NULL,
                    enqueued_ms INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    not_before_ms INTEGER
                );
                CREATE INDEX item_queue ON item(queue, seq);
        """

    /// The most sign-outs a stored generation can count: past any app's, and far enough below
    /// `Int64.max` that counting on from it never overflows.
    static let largestSignIn: Int64 = 1 << 62

    /// The sign-in generation stored by the last reset, read at once.
    ///
    /// - throws: ``OutboxError/storage(reason:)`` for a generation no count of sign-outs makes
    ///   (a damaged or edited file): counting on from it could overflow, or give the next user
    ///   the generation of this one's items.
    func signIn() throws -> Int64 {
        let stored = try pool.read { db in try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'signin'") ?? 0 }
        guard (0...Self.largestSignIn).contains(stored) else {
            throw OutboxError.storage(reason: "the stored sign-in generation \(stored) is not a count of sign-outs: the outbox's file is damaged")
        }
        return stored
    }

    /// Stores `item` in one transaction, unless the outbox is full.
    func insert(_ item: OutboxItem, _ request: OutboxRequest, signIn: Int64, limits: Outbox.Policy) async throws {
        let params: Data
        do {
            params = try JSON.object(request.params).encoded()
        } catch {
            throw OutboxError.invalidRequest(.paramsUnencodable(reason: error.reason))
        }
        let bytes = params.count + (request.body?.count ?? 0)
        let headers = OutboxRequest.storedHeaders(request.headers)
        try await pool.write { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(bytes), 0) FROM item")
            let (count, stored) = (row?[0] ?? 0, row?[1] ?? 0) as (Int, Int)
            guard count < limits.maximumItems, stored + bytes <= limits.maximumBytes else {
                throw OutboxError.full(items: count, bytes: stored)
            }
            try db.execute(
                sql: """
                    INSERT INTO item (id, queue, signin, service, method, path, name, encoding, headers, timeout_ms,
                                      params, body, content_type, bytes, enqueued_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    item.id, item.queue, signIn, request.service.rawValue, request.method.rawValue, request.path,
                    request.name, OutboxRequest.encodingName(request.encoding), headers,
                    Backoff.milliseconds(request.timeout), params, request.body, request.contentType, bytes,
                    Int64((item.enqueued.timeIntervalSince1970 * 1000).rounded()),
                ])
        }
    }

    /// The first item of each queue made under `signIn`, skipping the queues in `busy`; a first
    /// row that cannot be read is among ``Heads/unreadable`` (its queue waits behind it).
    func heads(signIn: Int64, excluding busy: Set<String>) async throws -> Heads {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM item WHERE seq IN (
                        SELECT min(seq) FROM item WHERE signin = ? GROUP BY queue
                    ) ORDER BY seq
                    """,
                arguments: [signIn])
            var heads = Heads()
            for row in rows {
                switch Self.read(row) {
                case .success(let stored) where !busy.contains(stored.item.queue): heads.ready.append(stored)
                case .success: continue
                case .failure(let unreadable): heads.unreadable.append(unreadable)
                }
            }
            return heads
        }
    }

    /// Removes the row `seq` (one that cannot be read); whether there was one.
    func removeRow(_ seq: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM item WHERE seq = ?", arguments: [seq])
            return db.changesCount > 0
        }
    }

    /// Every stored item made under a sign-in before `signIn`: the held ones.
    func held(before signIn: Int64) async throws -> [OutboxItem] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM item WHERE signin < ? ORDER BY seq", arguments: [signIn])
                .map(Self.item)
        }
    }

    /// Every stored item, in order.
    func all() async throws -> [OutboxItem] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM item ORDER BY seq").map(Self.item)
        }
    }

    /// Records a reset: the new generation, and, when dropping, removes the items of earlier ones.
    /// A synchronous write: it is done before ``Authentication/reset()`` returns.
    ///
    /// - returns: The items of earlier sign-ins (held, or removed).
    func recordSignIn(_ signIn: Int64, dropEarlier: Bool) throws -> [OutboxItem] {
        try pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('signin', ?)", arguments: [signIn])
            let earlier = try Row.fetchAll(db, sql: "SELECT * FROM item WHERE signin < ? ORDER BY seq", arguments: [signIn])
                .map(Self.item)
            if dropEarlier { try db.execute(sql: "DELETE FROM item WHERE signin < ?", arguments: [signIn]) }
            return earlier
        }
    }

    /// Makes the items of earlier sign-ins the current sign-in's; returns them.
    func adopt(into signIn: Int64) async throws -> [OutboxItem] {
        try await pool.write { db in
            let adopted = try Row.fetchAll(db, sql: "SELECT * FROM item WHERE signin < ? ORDER BY seq", arguments: [signIn])
                .map(Self.item)
            try db.execute(sql: "UPDATE item SET signin = ? WHERE signin < ?", arguments: [signIn, signIn])
            return adopted
        }
    }

    /// Removes the items of earlier sign-ins; returns them.
    func discard(before signIn: Int64) async throws -> [OutboxItem] {
        try await pool.write { db in
            let removed = try Row.fetchAll(db, sql: "SELECT * FROM item WHERE signin < ? ORDER BY seq", arguments: [signIn])
                .map(Self.item)
            try db.execute(sql: "DELETE FROM item WHERE signin < ?", arguments: [signIn])
            return removed
        }
    }

    /// Removes item `id`: its answer is final.
    func remove(_ id: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [id]) }
    }

    /// Counts a failed try of item `id` and sets when it may be tried again; returns the count.
    func recordFailure(_ id: String, notBefore: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE item SET attempts = attempts + 1, not_before_ms = ? WHERE id = ?", arguments: [notBefore, id])
            return try Int.fetchOne(db, sql: "SELECT attempts FROM item WHERE id = ?", arguments: [id]) ?? 0
        }
    }

    /// The item a stored row holds, as lists and sign-outs report it: also one whose row
    /// cannot be read, named by what can be (it fails when it heads its queue,
    /// ``heads(signIn:excluding:)``), so that no stored row goes unreported.
    private static func item(_ row: Row) -> OutboxItem {
        switch read(row) {
        case .success(let stored): stored.item
        case .failure(let unreadable): unreadable.item
        }
    }

    /// A stored row as an item, or what could be read of it and which field could not.
    /// Read with GRDB's throwing `decode`: its subscripts trap on a value of another type (a
    /// text column holding bytes that are not UTF-8, in a tampered file).
    private static func read(_ row: Row) -> Result<Stored, Unreadable> {
        func field<Value: DatabaseValueConvertible>(_ name: String) throws -> Value {
            try row.decode(Value.self, forColumn: name)
        }
        func unreadable(_ reason: String) -> Result<Stored, Unreadable> {
            // `seq` is the row id: SQLite keeps nothing but an integer there.
            let seq: Int64 = (try? field("seq")) ?? 0
            let enqueued: Int64? = try? field("enqueued_ms")
            let item = OutboxItem(
                id: (try? field("id")) ?? OutboxItem.unreadableID(row: seq), queue: (try? field("queue")) ?? "",
                apiName: (try? field("name")) ?? "",
                enqueued: Date(timeIntervalSince1970: Double(enqueued ?? 0) / 1000))
            return .failure(Unreadable(seq: seq, item: item, reason: reason))
        }
        do {
            guard let method = HTTPRequest.Method(try field("method") as String) else { return unreadable("method") }
            guard let encoding = OutboxRequest.encoding(named: try field("encoding")) else { return unreadable("encoding") }
            guard let headers = OutboxRequest.headers(stored: try field("headers")) else { return unreadable("headers") }
            guard let params = (try? JSON(parsing: try field("params") as Data))?.objectValue else {
                return unreadable("params")
            }
            let enqueued: Int64 = try field("enqueued_ms")
            let timeout: Int64 = try field("timeout_ms")
            let request = OutboxRequest(
                service: ServiceID(try field("service") as String), method: method, path: try field("path"),
                name: try field("name"), encoding: encoding, headers: headers, timeout: .milliseconds(timeout),
                params: params, body: try field("body"), contentType: try field("content_type"))
            let item = OutboxItem(
                id: try field("id"), queue: try field("queue"), apiName: request.name,
                enqueued: Date(timeIntervalSince1970: Double(enqueued) / 1000))
            return .success(
                Stored(
                    seq: try field("seq"), item: item, request: request, signIn: try field("signin"),
                    attempts: try field("attempts"), notBefore: try field("not_before_ms")))
        } catch {
            return unreadable("\(error)")
        }
    }
}
