import Foundation

/// The times behind an interleaved sample's ratios, for a reader who wants to know which side
/// moved: with `RUNWAY_BENCHMARK_TIMES` set to a file's path, each sample appends one line —
/// the process, the µs a load of each run (raw with `JSONSerialization`, raw with Runway's
/// parser, Runway), then, on Linux, each event loop thread's voluntary context switches and CPU
/// clock ticks so far (`NIO-SGLTN-1-#0 24000 12`) — to that file.
///
/// A ratio alone cannot tell a slower Runway from a quicker baseline, nor which loops did the
/// work: the sequential `Engine` line's two groups were read this way (`Benchmarks/README.md`).
enum SampleTimes {
    static func note(_ times: [Duration], loads: Int) {
        guard let path = ProcessInfo.processInfo.environment["RUNWAY_BENCHMARK_TIMES"], loads > 0,
            let file = FileHandle(forWritingAtPath: path) ?? created(path)
        else { return }
        defer { try? file.close() }
        let perLoad = times.map { String(Int(($0 / .microseconds(1)) / Double(loads))) }
        let fields = [String(ProcessInfo.processInfo.processIdentifier)] + perLoad + eventLoopThreads()
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data((fields.joined(separator: " ") + "\n").utf8))
    }

    /// Each SwiftNIO thread of the process as `name switches ticks`, from `/proc` (none elsewhere).
    private static func eventLoopThreads() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.sorted().compactMap { id -> String? in
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8)
            else { return nil }
            let lines = status.split(separator: "\n")
            func value(_ key: String) -> String? {
                lines.first { $0.hasPrefix(key + ":") }?.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
            }
            guard let name = value("Name"), name.hasPrefix("NIO-"), let switches = value("voluntary_ctxt_switches")
            else { return nil }
            // After the command's closing parenthesis: the state, then fields 4 on; utime and
            // stime are fields 14 and 15 (proc(5)).
            let after = stat.split(separator: ")").last?.split(separator: " ") ?? []
            guard after.count > 12, let user = Int(after[11]), let system = Int(after[12]) else { return nil }
            return "\(name) \(switches) \(user + system)"
        }
    }

    private static func created(_ path: String) -> FileHandle? {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        return FileHandle(forWritingAtPath: path)
    }
}
