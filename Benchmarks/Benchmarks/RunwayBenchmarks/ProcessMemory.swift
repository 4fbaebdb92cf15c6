import Foundation

/// This process's memory, as the launch and soak lines report it.
enum ProcessMemory {
    /// Resident memory now, in KB (`VmRSS` on Linux; the peak elsewhere).
    static func residentKB() -> Int {
        #if os(Linux)
        return statusKB("VmRSS") ?? 0
        #else
        return peakResidentKB()
        #endif
    }

    /// The peak resident memory, in KB. On Linux from `VmHWM`: `getrusage` would report the
    /// parent's size for a child spawned with `posix_spawn`.
    static func peakResidentKB() -> Int {
        #if os(Linux)
        return statusKB("VmHWM") ?? 0
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) / 1024  // bytes on Darwin
        #endif
    }

    /// A `kB` field of `/proc/self/status`.
    static func statusKB(_ field: String) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }
}
