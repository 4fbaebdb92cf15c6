import Foundation

/// Memory figures of a process from Linux's `/proc/PID/status`, in kilobytes.
enum ProcessStatus {
    /// The field `name` (`VmRSS`, resident now; `VmHWM`, the peak since start or since the last
    /// ``resetPeak(pid:)``) of this process or of `pid`; `nil` where `/proc` does not exist.
    static func kilobytes(_ name: String, pid: Int32? = nil) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") })
        else { return nil }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
    }

    /// Resets `pid`'s peak resident size to what it holds now (Linux ≥ 4.0: writing 5 to
    /// `clear_refs`), so that the next `VmHWM` is the peak of what follows.
    static func resetPeak(pid: Int32) {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
    }

    /// Gives the allocator's free pages back to the system (glibc's `malloc_trim`; nothing
    /// elsewhere), so that a resident size read next is what is live, not what the allocator
    /// keeps cached per thread — which differs between transports that run on different
    /// threads, and reads as a leak when it is none.
    static func trimHeap() {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        #endif
    }
}

#if canImport(Glibc)
/// glibc's `malloc_trim(3)`, which its Swift module does not export.
@_silgen_name("malloc_trim") private func mallocTrim(_ pad: Int) -> Int32
#endif
