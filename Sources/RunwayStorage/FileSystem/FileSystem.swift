import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX calls storage needs, each turning failure into a typed ``StorageError``.
enum FileSystem {
    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func fail(_ operation: String, _ url: URL, _ code: Int32 = errno) -> StorageError {
        if code == ENOSPC || code == EDQUOT {
            return .insufficientSpace(needed: -1, available: 0)
        }
        return .io(operation: operation, path: url.path, reason: reason(code))
    }

    /// Creates `url` and its parents when missing; a new directory gets `permissions`.
    static func createDirectory(_ url: URL, permissions: Int) throws(StorageError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw .io(operation: "create directory", path: url.path, reason: "a file is in the way")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: permissions])
        } catch {
            throw .io(operation: "create directory", path: url.path, reason: "\(error.localizedDescription)")
        }
    }

    /// Checks, without following links, that `url` is a directory owned by this user that no one
    /// else may read or write: what a private folder in a shared place (`/tmp`) must be before
    /// anything goes into it, since another local user may have made it first.
    static func verifyPrivateDirectory(_ url: URL) throws(StorageError) {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw fail("inspect", url) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .untrustedDirectory(path: url.path, reason: "it is a symbolic link or a file, not a directory")
        }
        guard info.st_uid == getuid() else {
            throw .untrustedDirectory(path: url.path, reason: "it belongs to another user (uid \(info.st_uid))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw .untrustedDirectory(
                path: url.path, reason: "other users may use it (mode \(String(info.st_mode & 0o777, radix: 8)))")
        }
    }

    /// The components of a relative path, refusing empty, absolute and climbing paths.
    static func validatedComponents(_ path: String) throws(StorageError) -> [String] {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.contains("\0") else { throw .invalidPath(path) }
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !components.isEmpty, !components.contains(".."), !components.contains(".") else {
            throw .invalidPath(path)
        }
        return components
    }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    static func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }

    /// Flushes a directory's entries (a rename inside it) to disk.
    static func syncDirectory(_ url: URL) {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Renames atomically within one file system.
    static func rename(_ source: URL, to destination: URL) throws(StorageError) {
        guard systemRename(source.path, destination.path) == 0 else { throw fail("rename", source) }
    }

    /// `write(2)`, named apart from the `write` methods of the types that call it.
    static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
        return Darwin.write(descriptor, bytes, count)
        #elseif canImport(Musl)
        return Musl.write(descriptor, bytes, count)
        #else
        return Glibc.write(descriptor, bytes, count)
        #endif
    }

    /// `rename(2)`, named apart from ``rename(_:to:)``.
    static func systemRename(_ source: String, _ destination: String) -> Int32 {
        #if canImport(Darwin)
        return Darwin.rename(source, destination)
        #elseif canImport(Musl)
        return Musl.rename(source, destination)
        #else
        return Glibc.rename(source, destination)
        #endif
    }

    static func remove(_ url: URL) throws(StorageError) {
        do { try FileManager.default.removeItem(at: url) } catch {
            throw .io(operation: "remove", path: url.path, reason: error.localizedDescription)
        }
    }

    static func setPermissions(_ url: URL, _ permissions: Int) throws(StorageError) {
        guard chmod(url.path, mode_t(permissions)) == 0 else { throw fail("chmod", url) }
    }

    static func permissions(of url: URL) -> Int? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Int(info.st_mode) & 0o7777
    }

    static func size(of url: URL) -> Int64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return 0 }
        return Int64(info.st_size)
    }

    static func modificationDate(of url: URL) -> Date {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? .distantPast
    }

    static func read(_ url: URL) throws(StorageError) -> Data {
        guard exists(url) else { throw .notFound(url.path) }
        do { return try Data(contentsOf: url) } catch {
            throw .io(operation: "read", path: url.path, reason: error.localizedDescription)
        }
    }
}
