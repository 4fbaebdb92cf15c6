import Foundation

// Compiled twice: here for `runway bench --suite cache`, and in the benchmark package through
// the link Benchmarks/Benchmarks/RunwayBenchmarks/CacheLines, so both measure the same lines.

/// The kernel's page cache, dropped for cold reads: what a read meets after a reboot, or after the
/// system reclaimed a backgrounded app's file pages.
enum PageCache {
    static let control = "/proc/sys/vm/drop_caches"

    /// Whether this process may drop it (Linux, as root).
    static var canDrop: Bool { FileManager.default.isWritableFile(atPath: control) }

    /// Flushes dirty pages, then drops clean pages, dentries and inodes.
    static func drop() throws {
        sync()
        try Data("3\n".utf8).write(to: URL(fileURLWithPath: control))
    }
}
