import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file writes that are all or nothing: a temporary file beside the target, written,
/// flushed to disk, then renamed over it.
///
/// A crash, a full disk or a refused capacity check leaves either the old file or the new one,
/// never a mix, and no stray temporary file.
public enum AtomicFile {
    /// Writes `data` to `url` atomically.
    ///
    /// - parameters:
    ///   - data: The whole new content.
    ///   - url: The file to replace or create; its folder must exist.
    ///   - permissions: The new file's mode (default 0600: private).
    ///   - capacity: Checked before writing; `nil` skips the check (a full disk is still reported).
    ///   - usage: What the write is for (see ``CapacityUsage``).
    ///   - durable: Whether to flush the file and its folder to disk before returning. Still
    ///     atomic without it; skip it only for data that can be made again (caches).
    /// - throws: ``StorageError/insufficientSpace(needed:available:)`` before anything is
    ///   written, or ``StorageError/io(operation:path:reason:)``.
    public static func write(
        _ data: Data, to url: URL, permissions: Int = 0o600, capacity: (any CapacitySource)? = SystemCapacity(),
        usage: CapacityUsage = .important, durable: Bool = true
    ) throws(StorageError) {
        if let capacity {
            try capacity.ensure(Int64(data.count), at: url.deletingLastPathComponent(), for: usage)
        }
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, mode_t(permissions))
        guard descriptor >= 0 else { throw FileSystem.fail("create", temporary) }
        var failure: StorageError?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = FileSystem.systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = FileSystem.fail("write", temporary)
                    return
                }
                offset += written
            }
        }
        if durable, failure == nil, fsync(descriptor) != 0 { failure = FileSystem.fail("fsync", temporary) }
        close(descriptor)
        if let failure {
            unlink(temporary.path)
            if case .insufficientSpace = failure {
                throw .insufficientSpace(needed: Int64(data.count), available: 0)
            }
            throw failure
        }
        do {
            try FileSystem.rename(temporary, to: url)
        } catch {
            unlink(temporary.path)
            throw error
        }
        if durable { FileSystem.syncDirectory(directory) }
    }
}
