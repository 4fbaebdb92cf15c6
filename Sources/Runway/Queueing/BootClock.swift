import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Time since the system booted, sleep included, and which boot it is: what the operation log
/// and the outbox measure queue ages and back-offs with, so that a user setting the wall clock
/// back a day does not delay uploads by a day — and what they persist, so that a relaunch
/// within the same boot keeps them.
///
/// Linux: `CLOCK_BOOTTIME` and `/proc/sys/kernel/random/boot_id`. Apple platforms:
/// `CLOCK_MONOTONIC` (which counts sleep there) and `kern.bootsessionuuid`. Where the boot
/// cannot be named, every launch counts as a new boot.
enum BootClock {
    /// Milliseconds since boot.
    static func nowMilliseconds() -> Int64 {
        #if canImport(Darwin)
        Int64(clock_gettime_nsec_np(CLOCK_MONOTONIC) / 1_000_000)
        #else
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
        #endif
    }

    /// This boot's identifier; a fresh one per process where the system does not name its boots.
    static let bootID: String = {
        #if canImport(Darwin)
        var size = 0
        if sysctlbyname("kern.bootsessionuuid", nil, &size, nil, 0) == 0, size > 1 {
            var bytes = [CChar](repeating: 0, count: size)
            if sysctlbyname("kern.bootsessionuuid", &bytes, &size, nil, 0) == 0 {
                let id = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !id.isEmpty { return id }
            }
        }
        #else
        if let id = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty
        {
            return id
        }
        #endif
        return "process-" + UUID().uuidString
    }()
}
