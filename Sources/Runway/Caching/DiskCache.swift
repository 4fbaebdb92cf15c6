import Dispatch
import Foundation
import GRDB
import GRDBSQLite
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

    /// Where the tier is: opening in the background (only ever seen off ``queue``: the opening is
    /// the queue's first work), open, or unavailable after an opening that failed.
    private enum Phase {
        /// Opening; `isNew` when no file was there, so nothing on it for a lookup to find yet.
        case opening(isNew: Bool)
        /// Open: every read and write goes to this database.
        case open(DatabasePool)
        /// Unavailable: lookups miss, nothing is written.
        case failed(any Error)
    }

    private let phase: Locked<Phase>
    /// The open database, if the tier is open.
    private var pool: DatabasePool? {
        phase.withLock { phase in
            guard case .open(let pool) = phase else { return nil }
            return pool
        }
    }
    private static let name = "runway/http-cache.sqlite"
    private let container: Container
    private let migrator: DatabaseMigrator
    private let blobs: URL
    /// `blobs` as a path ending in `/`: a hit reads its file by path, without building a URL
    /// (which may ask the file system whether the name is a directory).
    private let blobsPath: String
    private let limits: Limits
    private let totalSize: Locked<Int64>
    /// The serial queue every disk access of ``ResponseCache`` and every trim runs on: SQLite and
    /// file I/O never occupy a thread of Swift's cooperative pool, and reads queued after writes
    /// see them.
    ///
    /// A tier to be made new (no file yet) queues its making with the first work asked of it (a
    /// store, a removal, a wait), ahead of that work: a cold launch makes the database once its
    /// first answer is stored, not while that first load runs (on a device with few cores the
    /// making took CPU from it, measured in `Benchmarks/README.md`), and an app that stores
    /// nothing makes no file. (Not an inactive queue: releasing one traps in libdispatch.)
    @_spi(Benchmarks) public var queue: DispatchQueue {
        opensAtFirstWork.withLock { opens in
            guard opens else { return }
            opens = false
            // Under the lock: whoever gets the queue after this finds the opening ahead of its work.
            workQueue.async { [self] in openNow() }
        }
        return workQueue
    }
    private let workQueue = DispatchQueue(label: "runway.cache.disk", qos: .utility)
    /// Whether the opening waits for the first work asked of ``queue``.
    let opensAtFirstWork: Locked<Bool>
    /// Runs on the queue before the opening: where a test holds it.
    private let beforeOpening: (@Sendable () -> Void)?
    private let trimScheduled = Locked(false)
    /// Reads waiting to be recorded: a read stays a read, and recency is written with the next
    /// write (or before a trim, which is the only thing that needs it).
    private let pendingAccess = Locked<[String: TimeInterval]>([:])
    private let logger: Logger

    /// Opens (or makes again) the cache database in `container`'s caches role, now.
    @_spi(Benchmarks) public convenience init(container: Container, limits: Limits, logger: Logger) throws {
        let migrator = DiskCacheSchema.migrator()
        let opened = try Self.open(container: container, migrator: migrator, blobs: Self.blobsFolder(in: container), logger: logger)
        self.init(container: container, limits: limits, logger: logger, migrator: migrator, phase: .open(opened.pool))
        totalSize.withLock { $0 = opened.size }
    }

    /// Makes the tier at once and opens its database as the first work of ``queue``: every read,
    /// write and removal queued after waits for it, and nothing waits on the caller's thread.
    /// With no file there yet, the database is made once the first work is queued (``queue``).
    /// A failed opening is logged and leaves the tier unavailable (``openingError``).
    ///
    /// `beforeOpening` runs on the queue first: where a test holds the opening.
    convenience init(
        openingInBackground container: Container, limits: Limits, logger: Logger,
        beforeOpening: (@Sendable () -> Void)? = nil
    ) {
        let database = container.layout.directory(for: .caches).appendingPathComponent(Self.name, isDirectory: false)
        let isNew = !FileManager.default.fileExists(atPath: database.path)
        self.init(
            container: container, limits: limits, logger: logger, migrator: DiskCacheSchema.migrator(),
            phase: .opening(isNew: isNew), opensAtFirstWork: true, beforeOpening: beforeOpening)
        // A file already there opens at once: the first lookup waits for it.
        if !isNew { _ = queue }
    }

    /// Opens the database, on ``queue``, ahead of every other work queued there.
    private func openNow() {
        beforeOpening?()
        do {
            let opened = try Self.open(container: container, migrator: migrator, blobs: blobs, logger: logger)
            totalSize.withLock { $0 = opened.size }
            phase.withLock { $0 = .open(opened.pool) }
        } catch {
            logger.error("runway cache: the disk cache could not be opened; only memory is used", metadata: ["error": "\(error)"])
            phase.withLock { $0 = .failed(error) }
        }
    }

    private init(
        container: Container, limits: Limits, logger: Logger, migrator: DatabaseMigrator,
        phase: Phase, opensAtFirstWork: Bool = false, beforeOpening: (@Sendable () -> Void)? = nil
    ) {
        self.opensAtFirstWork = Locked(opensAtFirstWork)
        self.beforeOpening = beforeOpening
        self.limits = limits
        self.logger = logger
        self.container = container
        self.migrator = migrator
        blobs = Self.blobsFolder(in: container)
        blobsPath = Self.path(of: blobs)
        self.phase = Locked(phase)
        totalSize = Locked(0)
    }

    /// Where bodies stored as files live: `runway/http-cache-blobs/` in the caches role.
    private static func blobsFolder(in container: Container) -> URL {
        container.layout.directory(for: .caches).appendingPathComponent("runway/http-cache-blobs", isDirectory: true)
    }

    private static func path(of folder: URL) -> String {
        folder.path.hasSuffix("/") ? folder.path : folder.path + "/"
    }

    /// Opens the database (made again when SQLite finds it damaged) and reads its size.
    private static func open(
        container: Container, migrator: DatabaseMigrator, blobs: URL, logger: Logger
    ) throws -> (pool: DatabasePool, size: Int64) {
        _ = try container.url(for: "runway/http-cache-blobs/.keep", in: .caches)
        var pool: DatabasePool
        do {
            let opened = try StorageDatabase.open(name, in: .caches, of: container, migrator: migrator)
            // Touch the schema so a corrupt file is found now, not on the first request.
            _ = try opened.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") }
            pool = opened
        } catch where isCorruption(error) {
            logger.warning("runway cache: the disk cache was unreadable and is made again", metadata: ["error": "\(error)"])
            pool = try remake(name, container: container, migrator: migrator, blobs: blobs)
        }
        let size = try pool.read { db in try Int64.fetchOne(db, sql: DiskCacheSchema.totalSizeSQL) } ?? 0
        return (pool, size)
    }

    /// Whether a lookup can skip the disk now: the tier is being made new, so holds nothing yet
    /// (what this process stores meanwhile is queued behind the making, and in memory), or it is
    /// unavailable.
    var holdsNothingYet: Bool {
        phase.withLock { phase in
            switch phase {
            case .opening(let isNew): isNew
            case .open: false
            case .failed: true
            }
        }
    }

    /// What left the tier unavailable — a background opening that failed, or a damaged file that
    /// could not be made again; `nil` while it opens and while it is open.
    var openingError: (any Error)? {
        phase.withLock { phase in
            guard case .failed(let error) = phase else { return nil }
            return error
        }
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
        phase.withLock { phase in
            // Another caller already made it again.
            guard case .open(let pool) = phase, pool === damaged else { return }
            logger.warning("runway cache: the disk cache was found damaged and is made again", metadata: ["error": "\(error)"])
            try? pool.close()
            do {
                phase = .open(try Self.remake(Self.name, container: container, migrator: migrator, blobs: blobs))
            } catch {
                logger.error("runway cache: the disk cache could not be made again", metadata: ["error": "\(error)"])
                phase = .failed(error)
            }
        }
        pendingAccess.withLock { $0.removeAll() }
        totalSize.withLock { $0 = 0 }
    }

    /// The entry of `key`, fresh or not; marks it recently used.
    ///
    /// One cached statement outside a transaction (a single `SELECT` is atomic in SQLite) on the
    /// writer's connection, stepped and read through SQLite's C API, which GRDB hands out for
    /// this (`Statement.sqliteStatement`). Every disk access runs on ``queue``, so a reader
    /// connection would buy no concurrency, and a read through the pool's readers first asks
    /// SQLite for the schema version: a second read transaction, with its own file locks. GRDB's
    /// row cursor made every lookup slower (*Cache tiers* in `Benchmarks/README.md`). The C API also reads a row of the wrong types (a
    /// tampered file) as values, where a typed row read would trap.
    @_spi(Benchmarks) public func entry(_ key: String, now: Date) -> CachedEntry? {
        guard let pool else { return nil }
        do {
            let found = try pool.writeWithoutTransaction { db -> Found? in
                try Self.select(key, with: db.cachedStatement(sql: DiskCacheSchema.selectSQL), in: db)
            }
            guard let found else { return nil }
            // A status no answer has (a damaged or tampered row) would trap in `HTTPResponse`:
            // such a row is a miss, and goes.
            guard (100...599).contains(found.status) else {
                remove(key)
                return nil
            }
            let body: Data
            if let file = found.file {
                guard Self.isBlobName(file), let data = FileManager.default.contents(atPath: blobsPath + file) else {
                    remove(key)
                    return nil
                }
                body = data
            } else {
                body = found.body ?? Data()
            }
            pendingAccess.withLock { $0[key] = now.timeIntervalSince1970 }
            return CachedEntry(
                key: key, status: found.status, headers: Self.decodeHeaders(found.headers), body: body, json: nil,
                storedAt: Date(timeIntervalSince1970: found.storedAt), expiresAt: Date(timeIntervalSince1970: found.expiresAt),
                apiName: found.apiName, sensitiveComponent: found.sensitiveComponent, url: found.url,
                variant: found.variant)
        } catch {
            logger.warning("runway cache: disk read failed", metadata: ["error": "\(error)"])
            recover(from: error, seenOn: pool)
            return nil
        }
    }

    /// Whether `name` can be a body file the tier wrote: one name inside the blobs folder. A row
    /// that names anything else (a tampered file naming `../…`) is never read or deleted through.
    static func isBlobName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }


    @_spi(Benchmarks) public func store(_ entry: CachedEntry, now: Date) {
        guard let pool else { return }
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
                let old = try Row.fetchOne(db.cachedStatement(sql: DiskCacheSchema.previousSQL), arguments: [entry.key])
                try db.cachedStatement(sql: DiskCacheSchema.insertSQL).execute(arguments: [
                    entry.key, entry.status, headers, inline ? entry.body : nil, file, size,
                    entry.storedAt.timeIntervalSince1970, entry.expiresAt.timeIntervalSince1970, now.timeIntervalSince1970,
                    entry.apiName, entry.sensitiveComponent, entry.url, entry.variant,
                ])
                // Read leniently: a row of a tampered file may hold anything.
                return (old.flatMap { Int64.fromDatabaseValue($0[0]) } ?? 0, old.flatMap { String.fromDatabaseValue($0[1]) })
            }
            // The body moved from a file into the index: the file goes.
            if inline, let old = previous.file, Self.isBlobName(old) {
                try? FileManager.default.removeItem(atPath: blobsPath + old)
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
        guard let pool else { return }
        do {
            let files = try pool.write { db -> [String] in
                let files = try String.fetchAll(db, sql: "SELECT file FROM entry WHERE file IS NOT NULL AND \(condition)", arguments: StatementArguments(values))
                try db.execute(sql: "DELETE FROM entry WHERE \(condition)", arguments: StatementArguments(values))
                return files
            }
            try discard(files, in: pool)
        } catch {
            logger.warning("runway cache: disk removal failed", metadata: ["error": "\(error)"])
            recover(from: error, seenOn: pool)
        }
    }

    /// Deletes the blob files of removed rows and recounts the total from the index.
    private func discard(_ files: [String], in pool: DatabasePool) throws {
        for file in files where Self.isBlobName(file) { try? FileManager.default.removeItem(atPath: blobsPath + file) }
        let size = try pool.read { db in try Int64.fetchOne(db, sql: DiskCacheSchema.totalSizeSQL) } ?? 0
        totalSize.withLock { $0 = size }
    }


    var size: Int64 { totalSize.withLock { $0 } }

    var count: Int { (try? pool?.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM entry") }) ?? 0 }

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
        guard let pool else { return }
        let accesses = takePendingAccess()
        do {
            let files = try pool.write { db -> [String] in
                try Self.record(accesses, in: db)
                var total = try Int64.fetchOne(db, sql: DiskCacheSchema.totalSizeSQL) ?? 0
                var files: [String] = []
                let rows = try Row.fetchCursor(db, sql: "SELECT key, size, file FROM entry ORDER BY accessed_at ASC")
                var victims: [DatabaseValue] = []
                while total > target, let row = try rows.next() {
                    victims.append(row["key"])
                    total -= Int64.fromDatabaseValue(row["size"]) ?? 0
                    if let file = String.fromDatabaseValue(row["file"]) { files.append(file) }
                }
                for key in victims { try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [key]) }
                return files
            }
            try discard(files, in: pool)
        } catch {
            logger.warning("runway cache: trimming failed", metadata: ["error": "\(error)"])
        }
    }
}
