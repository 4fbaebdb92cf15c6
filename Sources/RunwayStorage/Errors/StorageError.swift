/// Every way a storage operation can fail, as one typed error.
///
/// Each failure leaves what was on disk as it was: a refused write leaves no half-written file,
/// a refused read leaves the file untouched.
public enum StorageError: Error, Sendable, Hashable {
    /// Not enough free space for the write; nothing was written.
    case insufficientSpace(needed: Int64, available: Int64)
    /// The file is not a readable envelope of its format (truncated, garbled, wrong header).
    case corrupt(path: String, reason: String)
    /// The file was written by a newer version of the format than this build knows; it is left
    /// untouched.
    case unsupportedVersion(format: String, found: Int, newest: Int)
    /// The file holds another format than the one asked for.
    case formatMismatch(expected: String, found: String)
    /// No migration is registered from this version to the next.
    case missingMigration(format: String, from: Int)
    /// A migration refused the payload; the file is left untouched.
    case migrationFailed(format: String, from: Int, reason: String)
    /// The incoming document's type is not among those declared as accepted.
    case unsupportedContentType(path: String, reason: String)
    /// A relative path that is empty, absolute, or climbs out of its directory (`..`).
    case invalidPath(String)
    /// There is no file at the path.
    case notFound(String)
    /// The operating system refused an operation.
    case io(operation: String, path: String, reason: String)
    /// A private directory in a shared place (the temporary role under `/tmp`) is not this
    /// user's own: a symbolic link, another user's, or open to others. Nothing was written to it.
    case untrustedDirectory(path: String, reason: String)
}

extension StorageError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .insufficientSpace(let needed, let available):
            return "not enough free space: \(needed) bytes needed, \(available) available"
        case .corrupt(let path, let reason): return "\(path) is corrupt: \(reason)"
        case .unsupportedVersion(let format, let found, let newest):
            return "\(format) version \(found) is newer than this build reads (up to \(newest))"
        case .formatMismatch(let expected, let found): return "expected format \(expected), found \(found)"
        case .missingMigration(let format, let from): return "no migration of \(format) from version \(from)"
        case .migrationFailed(let format, let from, let reason):
            return "migrating \(format) from version \(from) failed: \(reason)"
        case .unsupportedContentType(let path, let reason): return "\(path) is refused: \(reason)"
        case .invalidPath(let path): return "\"\(path)\" is not a relative path inside its directory"
        case .notFound(let path): return "no file at \(path)"
        case .io(let operation, let path, let reason): return "\(operation) \(path) failed: \(reason)"
        case .untrustedDirectory(let path, let reason): return "\(path) is not a private directory of this user: \(reason)"
        }
    }
}
