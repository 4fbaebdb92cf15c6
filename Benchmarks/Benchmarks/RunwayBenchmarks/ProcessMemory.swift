import Foundation

/// This process's memory, as the launch and soak lines report it (`ProcessStatus` is the
/// command-line tool's file, which this package compiles through a link).
enum ProcessMemory {
    /// Resident memory now, in KB (`VmRSS` on Linux; the peak elsewhere).
    static func residentKB() -> Int {
        #if os(Linux)
        return ProcessStatus.kilobytes("VmRSS") ?? 0
        #else
        return peakResidentKB()
        #endif
    }

    /// The peak resident memory, in KB. On Linux from `VmHWM`: `getrusage` would report the
    /// parent's size for a child spawned with `posix_spawn`.
    static func peakResidentKB() -> Int {
        #if os(Linux)
        return ProcessStatus.kilobytes("VmHWM") ?? 0
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) / 1024  // bytes on Darwin
        #endif
    }
}
