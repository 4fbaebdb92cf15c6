import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a write is for, which decides how much of the free space it may take.
///
/// Apple's guidance: important writes (what the user asked for) may use all free space;
/// opportunistic ones (prefetching, caches) should leave room for everything else.
public enum CapacityUsage: Sendable, Hashable {
    /// The user is waiting for it: may use all free space.
    case important
    /// Nice to have: leaves a reserve free.
    case opportunistic
}

/// Tells how many bytes a volume can take for a usage.
public protocol CapacitySource: Sendable {
    /// The bytes available at `url` (or its nearest existing parent) for `usage`.
    ///
    /// - throws: ``StorageError/io(operation:path:reason:)`` when the volume cannot be read.
    func availableCapacity(at url: URL, for usage: CapacityUsage) throws(StorageError) -> Int64
}

/// The operating system's figures.
///
/// Apple: the volume's `volumeAvailableCapacityForImportantUsage` and
/// `…ForOpportunisticUsage` resource values. Linux: `statvfs` — the blocks available to an
/// unprivileged user for important use, and that minus ``opportunisticReserve(volumeSize:)`` —
/// 5 % of the volume, at most 1 GiB — for opportunistic use.
public struct SystemCapacity: CapacitySource {
    public init() {}

    /// What opportunistic writes leave free on Linux: 5 % of the volume, at most 1 GiB.
    public static func opportunisticReserve(volumeSize: Int64) -> Int64 {
        min(volumeSize / 20, 1 << 30)
    }

    public func availableCapacity(at url: URL, for usage: CapacityUsage) throws(StorageError) -> Int64 {
        var probe = url
        while !FileSystem.exists(probe), probe.pathComponents.count > 1 {
            probe.deleteLastPathComponent()
        }
        #if canImport(Darwin)
        let keys: Set<URLResourceKey> = [
            .volumeAvailableCapacityForImportantUsageKey, .volumeAvailableCapacityForOpportunisticUsageKey,
        ]
        do {
            let values = try probe.resourceValues(forKeys: keys)
            switch usage {
            case .important: return values.volumeAvailableCapacityForImportantUsage ?? 0
            case .opportunistic: return values.volumeAvailableCapacityForOpportunisticUsage ?? 0
            }
        } catch {
            throw .io(operation: "read capacity", path: probe.path, reason: error.localizedDescription)
        }
        #else
        var info = statvfs()
        guard statvfs(probe.path, &info) == 0 else { throw FileSystem.fail("statvfs", probe) }
        let available = Self.bytes(info.f_bavail, of: info.f_frsize)
        switch usage {
        case .important: return available
        case .opportunistic:
            return max(0, available - Self.opportunisticReserve(volumeSize: Self.bytes(info.f_blocks, of: info.f_frsize)))
        }
        #endif
    }

    /// `blocks` of `size` bytes, as `statvfs` counts them, at most `Int64.max`: a network or FUSE
    /// file system may report counts no disk has ("unlimited" as all bits set), and a product
    /// past `Int64` would stop the process.
    static func bytes<Blocks: BinaryInteger, Size: BinaryInteger>(_ blocks: Blocks, of size: Size) -> Int64 {
        let (blocks, size) = (Int64(clamping: blocks), Int64(clamping: size))
        guard blocks > 0, size > 0 else { return 0 }
        let product = blocks.multipliedReportingOverflow(by: size)
        return product.overflow ? .max : product.partialValue
    }
}

/// A fixed figure, for tests and for apps that budget their own space.
public struct FixedCapacity: CapacitySource {
    /// The bytes reported for every usage.
    public var bytes: Int64

    public init(bytes: Int64) { self.bytes = bytes }

    public func availableCapacity(at url: URL, for usage: CapacityUsage) throws(StorageError) -> Int64 { bytes }
}

extension CapacitySource {
    /// Checks that `bytes` fit at `url` for `usage`.
    ///
    /// - throws: ``StorageError/insufficientSpace(needed:available:)`` when they do not.
    public func ensure(_ bytes: Int64, at url: URL, for usage: CapacityUsage) throws(StorageError) {
        let available = try availableCapacity(at: url, for: usage)
        guard bytes <= available else { throw .insufficientSpace(needed: bytes, available: available) }
    }
}
