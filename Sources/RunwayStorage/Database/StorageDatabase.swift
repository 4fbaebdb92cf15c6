import Foundation
public import GRDB

/// Opens SQLite databases (through GRDB) in a container role, for structured data that grows:
/// a disk cache index, a queue of operation logs.
///
/// Databases are opened as a `DatabasePool`, which uses write-ahead logging: readers never block
/// the writer. A database in ``ContainerRole/caches`` is re-creatable by definition; elsewhere,
/// register migrations so that older files are brought up to date.
public enum StorageDatabase {
    /// Opens (creating if needed) the database `name` in `role` of `container`.
    ///
    /// In ``ContainerRole/caches`` the database commits with `synchronous = NORMAL`: with WAL the
    /// file stays consistent, and a power cut may lose only the last commits — fine for data that
    /// can be fetched again, and much cheaper than a sync per commit.
    ///
    /// - parameters:
    ///   - container: The app's storage container.
    ///   - role: The role whose directory holds the file.
    ///   - name: A relative path such as `"cache/index.sqlite"`.
    ///   - migrator: Schema migrations, applied in order on open.
    /// - throws: ``StorageError`` for the path; GRDB's `DatabaseError` when SQLite refuses the
    ///   file (for example when it is not a database).
    public static func open(
        _ name: String, in role: ContainerRole, of container: Container, migrator: DatabaseMigrator? = nil
    ) throws -> DatabasePool {
        let url = try container.url(for: name, in: role)
        var configuration = Configuration()
        configuration.journalMode = .wal
        if role == .caches {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try migrator?.migrate(pool)
        return pool
    }
}
