import Foundation

/// With `RUNWAY_BENCHMARK_CPUS` set to `CLIENT/SERVER` (`1/0`), the benchmark process — every
/// thread it has and every one it makes later — runs on CPU `CLIENT` only and the server's
/// process on CPU `SERVER` only (Linux, with util-linux's `taskset`; unset, nothing changes).
///
/// Why: on two cores the clients' threads, their event loops' and the server's share both
/// cores as the scheduler places them, and a sequential line's ratio then moves with where each
/// wake-up lands (the two groups of the sequential `Engine` line). Pinned this way, once the
/// process is up, the sequential lines read alike from process to process; a process started
/// on one core (`taskset` around the whole command) read lower (`Benchmarks/README.md`).
enum CPUPinning {
    static let variable = "RUNWAY_BENCHMARK_CPUS"

    /// Pins this process to the client's CPU and `server` to the server's, when the variable
    /// asks for it; a value that is not two CPU numbers fails the setup rather than run unpinned.
    static func apply(server: Int32) throws {
        guard let value = ProcessInfo.processInfo.environment[variable] else { return }
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        let cpus = parts.compactMap { Int($0) }.filter { $0 >= 0 }
        guard parts.count == 2, cpus.count == 2 else { throw PinningError.unreadable }
        try pin(ProcessInfo.processInfo.processIdentifier, to: cpus[0])
        try pin(server, to: cpus[1])
    }

    /// Every thread of process `pid` (`-a`) to `cpu`; threads made later inherit it.
    private static func pin(_ pid: Int32, to cpu: Int) throws {
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-a", "-p", "-c", String(cpu), String(pid)]
        taskset.standardOutput = FileHandle.nullDevice
        try taskset.run()
        taskset.waitUntilExit()
        guard taskset.terminationStatus == 0 else { throw PinningError.refused(pid: pid, cpu: cpu) }
    }

    enum PinningError: Error {
        /// The variable is not `CLIENT/SERVER`, two CPU numbers.
        case unreadable
        /// `taskset` could not pin the process (no such CPU, say).
        case refused(pid: Int32, cpu: Int)
    }
}
