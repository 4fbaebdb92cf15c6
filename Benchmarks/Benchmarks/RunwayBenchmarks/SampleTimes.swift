import Foundation

/// The times behind an interleaved sample's ratios, for a reader who wants to know which side
/// moved: with `RUNWAY_BENCHMARK_TIMES` set to a file's path, each sample appends one line —
/// the process, then the µs a load of each run (raw with `JSONSerialization`, raw with Runway's
/// parser, Runway) — to that file.
///
/// A ratio alone cannot tell a slower Runway from a quicker baseline: the sequential `Engine`
/// line's two groups were read this way (`Benchmarks/README.md`).
enum SampleTimes {
    static func note(_ times: [Duration], loads: Int) {
        guard let path = ProcessInfo.processInfo.environment["RUNWAY_BENCHMARK_TIMES"], loads > 0,
            let file = FileHandle(forWritingAtPath: path) ?? created(path)
        else { return }
        defer { try? file.close() }
        let perLoad = times.map { String(Int(($0 / .microseconds(1)) / Double(loads))) }
        let line = "\(ProcessInfo.processInfo.processIdentifier) \(perLoad.joined(separator: " "))\n"
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data(line.utf8))
    }

    private static func created(_ path: String) -> FileHandle? {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        return FileHandle(forWritingAtPath: path)
    }
}
