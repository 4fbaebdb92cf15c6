import GRDB

/// The disk cache's SQLite schema and the statements its hot paths run.
enum DiskCacheSchema {
    /// The migrations that make the `entry` table.
    static func migrator() -> DatabaseMigrator {
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
                    sensitive TEXT,
                    -- The URL that answered, after redirects.
                    url TEXT
                );
                CREATE INDEX entry_accessed ON entry(accessed_at);
                CREATE INDEX entry_api ON entry(api);
                CREATE INDEX entry_sensitive ON entry(sensitive);
                """)
        }
        // The request's values of the fields a response's `Vary` names.
        migrator.registerMigration("entries-v2-variant") { db in
            try db.execute(sql: "ALTER TABLE entry ADD COLUMN variant TEXT")
        }
        return migrator
    }

    /// An entry by key: what a lookup reads.
    static let selectSQL =
        "SELECT status, headers, body, file, stored_at, expires_at, api, sensitive, url, variant FROM entry WHERE key = ?"
    /// The size and file of the entry a store replaces.
    static let previousSQL = "SELECT size, file FROM entry WHERE key = ?"
    /// A store.
    static let insertSQL = """
        INSERT OR REPLACE INTO entry (key, status, headers, body, file, size, stored_at, expires_at, accessed_at, api, sensitive, url, variant)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// The bytes of every entry.
    static let totalSizeSQL = "SELECT COALESCE(SUM(size), 0) FROM entry"
}
