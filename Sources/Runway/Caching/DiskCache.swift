import Dispatch
import Foundation
import GRDB
import HTTPTypes
public import Logging
public import RunwayStorage

/// The disk tier: an SQLite index (GRDB, WAL) in the caches role; small bodies inline, larger
/// ones as files beside it; a size limit kept by trimming least-recently-used entries to 70 %
/// in the background.
///
/// A database that SQLite finds corrupt or that is not a database at all (`SQLITE_CORRUPT`,
/// `SQLITE_NOTADB`) is deleted and made again, with a log line — at open, or later when a read
/// or write finds it so: a cache may lose its contents, never crash the app. Any other failure
/// to open (the file busy or locked by another process sharing the container, a permission
/// error) is thrown, and the file is left alone.
@_spi(Benchmarks) public final class DiskCache: Sendable {
    /// How much the tier keeps, and where a body is stored.
    @_spi(Benchmarks) public struct Limits: Sendable {
        var sizeLimit: Int64
        var trimRatio: Double
        var inlineThreshold: Int

        @_spi(Benchmarks) public init(sizeLimit: Int64, trimRatio: Double, inlineThreshold: Int) {
            self.sizeLimit = sizeLimit
            self.trimRatio = trimRatio
            self.inlineThreshold = inlineThreshold
        }
    }

    private let state: Locked<DatabasePool>
    private var pool: DatabasePool { state.withLock { $0 } }
    private let name = "runway/http-cache.sqlite"
    private let container: Container
    private let migrator: DatabaseMigrator
    private let blobs: URL
    private let limits: Limits
    private let totalSize: Locked<Int64>
    /// The serial queue every disk access of ``ResponseCache`` and every trim runs on: SQLite and
    /// file I/O never occupy a thread of Swift's cooperative pool, and reads queued after writes
    /// see them.
    @_spi(Benchmarks) public let queue = DispatchQueue(label: "runway.cache.disk", qos: .utility)
    private let trimScheduled = Locked(false)
    /// Reads waiting to be recorded: a read stays a read, and recency is written with the next
    /// write (or before a trim, which is the only thing that needs it).
    private let pendingAccess = Locked<[String: TimeInterval]>([:])
    private let logger: Logger

    /// Opens (or makes again) the cache database in `container`'s caches role.
    @_spi(Benchmarks) public init(container: Container, limits: Limits, logger: Logger) throws {
        self.limits = limits
        self.logger = logger
        self.container = container
        blobs = try container.url(for: "runway/http-cache-blobs/.keep", in: .caches).deletingLastPathComponent()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("entries-v1") { db in
            try db.execute(sql: """
                CREATE TABLE entry (
                    key TEXT PRIMARY KEY NOT NULL,
                    status INTEGER NOT NULL,
                    headers BLOB NOT NULL,
                    body BLOB,
                    file TEXT,
                    size INTEGER NOT NULL,
                    stored_at DOUBLE NOT NULL,
                    expires_at DOUBLE NOT NULL,
                    accessed_at DOUBLE NOT NULL,
                    api TEXT NOT NULL,
                    sensitive TEXT
                );
                CREATE INDEX entry_accessed ON entry(accessed_at);
                CREATE INDEX entry_api ON entry(api);
                CREATE INDEX entry_sensitive ON entry(sensitive);
                """)
        }
        // The URL that answered, after redirects.
        migrator.registerMigration("entries-v2-url") { db in
            try db.execute(sql: "ALTER TABLE entry ADD COLUMN url TEXT")
        }
        self.migrator = migrator
        var pool: DatabasePool
        do {
            let opened = try StorageDatabase.open(name, in: .caches, of: container, migrator: migrator)
            // Touch the schema so a corrupt file is found now, not on the first request.
            _ = try opened.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") }
            pool = opened
        } catch where Self.isCorruption(error) {
            logger.warning("runway cache: the disk cache was unreadable and is made again", metadata: ["error": "\(error)"])
            pool = try Self.remake(name, container: container, migrator: migrator, blobs: blobs)
        }
        self.state = Locked(pool)
        let size = try pool.read { db in try Int64.fetchOne(db, sql: Self.totalSizeSQL) } ?? 0
        totalSize = Locked(size)
    }

    /// Whether SQLite says the file is damaged or not a database: the only errors that make a
    /// cache delete its file.
    static func isCorruption(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }

    /// Deletes the database and its blobs and opens a new, empty one.
    private static func remake(
        _ name: String, container: Container, migrator: DatabaseMigrator, blobs: URL
    ) throws -> DatabasePool {
        let url = try container.url(for: name, in: .caches)
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
        try? FileManager.default.removeItem(at: blobs)
        try FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
        return try StorageDatabase.open(name, in: .caches, of: container, migrator: migrator)
    }

    /// A read or write found the database damaged: make it again (once, whoever finds it first).
    private func recover(from error: any Error, seenOn damaged: DatabasePool) {
        guard Self.isCorruption(error) else { return }
        state.withLock { pool in
            guard pool === damaged else { return }  // another caller already made it again
            logger.warning("runway cache: the disk cache was found damaged and is made again", metadata: ["error": "\(error)"])
            try? pool.close()
            do {
                pool = try Self.remake(name, container: container, migrator: migrator, blobs: blobs)
            } catch {
                logger.error("runway cache: the disk cache could not be made again", metadata: ["error": "\(error)"])
            }
        }
        pendingAccess.withLock { $0.removeAll() }
        totalSize.withLock { $0 = 0 }
    }

    /// The entry of `key`, fresh or not; marks it recently used.
    ///
    /// One cached statement outside a transaction (a single `SELECT` is atomic in SQLite), the
    /// row read by column index, headers parsed by Runway's JSON parser: a read costs about what
    /// opening a file does.
    @_spi(Benchmarks) public func entry(_ key: String, now: Date) -> CachedEntry? {
        let pool = self.pool
        do {
            let row = try pool.unsafeRead { db in
                try Row.fetchOne(db.cachedStatement(sql: Self.selectSQL), arguments: [key])
            }
            guard let row else { return nil }
            let body: Data
            if let file: String = row[3] {
                guard let data = try? Data(contentsOf: blobs.appendingPathComponent(file)) else {
                    remove(key)
                    return nil
                }
                body = data
            } else {
                body = row[2] ?? Data()
            }
            let headerData: Data = row[1] ?? Data()
            pendingAccess.withLock { $0[key] = now.timeIntervalSince1970 }
            return CachedEntry(
                key: key, status: row[0], headers: Self.decodeHeaders(headerData), body: body, json: nil,
                storedAt: Date(timeIntervalSince1970: row[4]), expiresAt: Date(timeIntervalSince1970: row[5]),
                apiName: row[6], sensitiveComponent: row[7], url: row[8])
        } catch {
            logger.warning("runway cache: disk read failed", metadata: ["error": "\(error)"])
            recover(from: error, seenOn: pool)
            return nil
        }
    }

    private static let selectSQL =
        "SELECT status, headers, body, file, stored_at, expires_at, api, sensitive, url FROM entry WHERE key = ?"
    private static let previousSQL = "SELECT size, file FROM entry WHERE key = ?"
    private static let insertSQL = """
        INSERT OR REPLACE INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Header fields as a JSON array of `[name, value]` pairs, in order, repeated fields apart.
    static func encodeHeaders(_ headers: HTTPFields) -> Data {
        let pairs = headers.map { JSON.array([.string($0.name.rawName), .string($0.value)]) }
        return (try? JSON.array(pairs).encoded()) ?? Data("[]".utf8)
    }

    /// Reads what ``encodeHeaders(_:)`` wrote, and the JSON object of strings that earlier
    /// versions wrote (one value per name); anything else reads as no fields.
    static func decodeHeaders(_ data: Data) -> HTTPFields {
        var fields = HTTPFields()
        switch try? JSON(parsing: data) {
        case .array(let pairs)?:
            for pair in pairs {
                guard case .array(let parts) = pair, parts.count == 2, let name = parts[0].stringValue.flatMap({ HTTPField.Name($0) }),
                    let value = parts[1].stringValue
                else { continue }
                fields.append(HTTPField(name: name, value: value))
            }
        case .object(let members)?:
            for (name, value) in members {
                guard let name = HTTPField.Name(name), let value = value.stringValue else { continue }
                fields.append(HTTPField(name: name, value: value))
            }
        default:
            break
        }
        return fields
    }

    @_spi(Benchmarks) public func store(_ entry: CachedEntry, now: Date) {
        let pool = self.pool
        let size = Int64(entry.body.count)
        let inline = entry.body.count <= limits.inlineThreshold
        let file = inline ? nil : entry.key
        do {
            if let file {
                try AtomicFile.write(
                    entry.body, to: blobs.appendingPathComponent(file), capacity: SystemCapacity(), usage: .opportunistic,
                    durable: false)
            }
            let headers = Self.encodeHeaders(entry.headers)
            let accesses = takePendingAccess()
            let previous = try pool.write { db -> (size: Int64, file: String?) in
                if !accesses.isEmpty { try Self.record(accesses, in: db) }
                let old = try Row.fetchOne(db.cachedStatement(sql: Self.previousSQL), arguments: [entry.key])
                try db.cachedStatement(sql: Self.insertSQL).execute(arguments: [
                    entry.key, entry.status, headers, inline ? entry.body : nil, file, size,
                    entry.storedAt.timeIntervalSince1970, entry.expiresAt.timeIntervalSince1970, now.timeIntervalSince1970,
                    entry.apiName, entry.sensitiveComponent, entry.url,
                ])
                return (old?[0] ?? 0, old?[1])
            }
            // The body moved from a file into the index: the file goes.
            if inline, let old = previous.file {
                try? FileManager.default.removeItem(at: blobs.appendingPathComponent(old))
            }
            let total = totalSize.withLock { total in
                total += size - previous.size
                return total
            }
            if total > limits.sizeLimit { trimInBackground() }
        } catch {
            // Out of space or a failing disk: the cache simply does not keep this one.
            logger.notice("runway cache: disk write skipped", metadata: ["error": "\(error)"])
            recover(from: error, seenOn: pool)
        }
    }

    private func takePendingAccess() -> [String: TimeInterval] {
        pendingAccess.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }

    private static func record(_ accesses: [String: TimeInterval], in db: Database) throws {
        for (key, time) in accesses {
            try db.cachedStatement(sql: "UPDATE entry SET accessed_at = ? WHERE key = ? AND accessed_at < ?")
                .execute(arguments: [time, key, time])
        }
    }

    func remove(_ key: String) {
        remove(where: "key = ?", [key])
    }

    func removeAll() { remove(where: "1", []) }

    func removeAll(api: String) { remove(where: "api = ?", [api]) }

    func removeAll(sensitiveComponent: String) { remove(where: "sensitive = ?", [sensitiveComponent]) }

    private func remove(where condition: String, _ values: [String]) {
        let pool = self.pool
        do {
            let files = try pool.write { db -> [String] in
                let files = try String.fetchAll(db, sql: "SELECT file FROM entry WHERE file IS NOT NULL AND \(condition)", arguments: StatementArguments(values))
                try db.execute(sql: "DELETE FROM entry WHERE \(condition)", arguments: StatementArguments(values))
                return files
            }
            try discard(files)
        } catch {
            logger.warning("runway cache: disk removal failed", metadata: ["error": "\(error)"])
            recover(from: error, seenOn: pool)
        }
    }

    /// Deletes the blob files of removed rows and recounts the total from the index.
    private func discard(_ files: [String]) throws {
        for file in files { try? FileManager.default.removeItem(at: blobs.appendingPathComponent(file)) }
        let size = try pool.read { db in try Int64.fetchOne(db, sql: Self.totalSizeSQL) } ?? 0
        totalSize.withLock { $0 = size }
    }

    static let totalSizeSQL = "SELECT COALESCE(SUM(size), 0) FROM entry"

    var size: Int64 { totalSize.withLock { $0 } }

    var count: Int { (try? pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") }) ?? 0 }

    /// Trims to ``Limits/trimRatio`` of the limit, least recently used first, once at a
    /// time, on the disk queue.
    private func trimInBackground() {
        let schedule = trimScheduled.withLock { scheduled -> Bool in
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        queue.async { [self] in
            trimScheduled.withLock { $0 = false }
            trim()
        }
    }

    /// Waits until everything queued on the disk queue so far (writes, removals, a trim) is done.
    func waitForQueuedWork() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    /// Waits for a background trim, if one runs.
    func waitForTrim() async { await waitForQueuedWork() }

    /// Runs `body` on the disk queue and hands back its result, suspending (not blocking) the
    /// caller meanwhile.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: body()) } }
    }

    /// Deletes least recently used entries until the total is within the trim target.
    func trim() {
        let target = Int64(Double(limits.sizeLimit) * limits.trimRatio)
        let accesses = takePendingAccess()
        do {
            let files = try pool.write { db -> [String] in
                try Self.record(accesses, in: db)
                var total = try Int64.fetchOne(db, sql: Self.totalSizeSQL) ?? 0
                var files: [String] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT key, size, file FROM entry ORDER BY accessed_at ASC")
                var victims: [String] = []
                while total > target, let row = try rows.next() {
                    victims.append(row["key"])
                    total -= row["size"]
                    if let file: String = row["file"] { files.append(file) }
                }
                for key in victims { try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [key]) }
                return files
            }
            try discard(files)
        } catch {
            logger.warning("runway cache: trimming failed", metadata: ["error": "\(error)"])
        }
    }
}
