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
}
