import Foundation
import GRDB
import GRDBSQLite

/// The disk tier's hot read, through SQLite's C API: one cached statement stepped and its row
/// copied out (see ``DiskCache/entry(_:now:)`` for why not GRDB's row cursor).
extension DiskCache {
    /// Steps ``selectSQL`` for `key` and copies the row out; the statement is reset and its
    /// binding cleared before returning, so it holds no read transaction and no pointer.
    static func select(_ key: String, with statement: Statement, in db: Database) throws -> Found? {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        // Bound without a copy (no destructor: SQLite keeps the pointer until the binding is
        // cleared), so the step and the column reads stay inside the key's buffer's lifetime.
        var utf8 = key
        return try utf8.withUTF8 { bytes -> Found? in
            let bound = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(handle, 1, $0.baseAddress, CInt($0.count), nil)
            }
            let code = bound == SQLITE_OK ? sqlite3_step(handle) : bound
            switch code {
            case SQLITE_DONE:
                return nil
            case SQLITE_ROW:
                return Found(
                    status: Int(clamping: sqlite3_column_int64(handle, 0)), headers: blob(handle, 1) ?? Data(), body: blob(handle, 2),
                    file: text(handle, 3), storedAt: sqlite3_column_double(handle, 4),
                    expiresAt: sqlite3_column_double(handle, 5), apiName: text(handle, 6) ?? "",
                    sensitiveComponent: text(handle, 7), url: text(handle, 8), variant: text(handle, 9))
            default:
                let message = db.sqliteConnection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: DiskCacheSchema.selectSQL)
            }
        }
    }

    /// Column `index` as bytes; `nil` for NULL.
    private static func blob(_ handle: SQLiteStatement, _ index: CInt) -> Data? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Column `index` as text (bytes that are not UTF-8 repaired); `nil` for NULL.
    private static func text(_ handle: SQLiteStatement, _ index: CInt) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// A row's columns, copied out of SQLite before the connection is let go.
    struct Found {
        var status: Int
        var headers: Data
        var body: Data?
        var file: String?
        var storedAt: Double
        var expiresAt: Double
        var apiName: String
        var sensitiveComponent: String?
        var url: String?
        var variant: String?
    }
}
