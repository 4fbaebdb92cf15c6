import Foundation

/// With `RUNWAY_BENCHMARK_SWEEP_KIB=N` a profile run's sequential loads (``ProfileRun``) each
/// follow a write to every cache line of an N KiB buffer: the `memory` and `parse` ways then
/// meet caches as cold as a load does after an exchange's kernel and event loop work has run,
/// which tells how much of the engine's cost over a real transport is cold caches rather than
/// its own instructions (`Benchmarks/README.md`).
final class CacheSweep {
    static let variable = "RUNWAY_BENCHMARK_SWEEP_KIB"

    /// Touched by the one task that runs the loads.
    private let words: UnsafeMutableBufferPointer<UInt64>

    /// The sweep the environment asks for, or `nil`.
    static func requested() -> CacheSweep? {
        // At most a GiB: the buffer's size in words cannot overflow.
        guard let value = ProcessInfo.processInfo.environment[variable], let kib = Int(value), (1...(1 << 20)).contains(kib)
        else { return nil }
        return CacheSweep(kib: kib)
    }

    private init(kib: Int) {
        words = .allocate(capacity: kib * 1024 / MemoryLayout<UInt64>.stride)
        words.initialize(repeating: 0)
    }

    deinit { words.deallocate() }

    /// One write to each 64-byte line.
    func sweep() {
        var index = 0
        while index < words.count {
            words[index] &+= 1
            index += 8
        }
    }
}
