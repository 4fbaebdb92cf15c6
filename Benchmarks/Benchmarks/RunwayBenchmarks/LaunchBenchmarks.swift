import Benchmark
import Foundation

/// From nothing to the first delivered load, each sample a new process (``LaunchChild``): the
/// time to the first delivered load from the process's first line of code and from its spawn,
/// how long the launch code held the main actor, the main thread's CPU time, and the peak
/// resident memory.
///
/// A cold launch opens Runway in an empty container (the cache database and the operation log
/// are made, their migrations run) and loads from the server; a warm one opens a container a
/// launch before it filled, and the first load is answered from the disk tier.
enum LaunchBenchmarks {
    /// The container of a line's warm launches, filled once by an unmeasured launch.
    final class WarmFolder: @unchecked Sendable {
        private let lock = NSLock()
        private var folder: URL?

        func prepared(_ way: LaunchChild.Way, baseURL: String) throws -> URL {
            lock.lock()
            defer { lock.unlock() }
            if let folder { return folder }
            let made = try LaunchBenchmarks.newFolder()
            _ = try LaunchBenchmarks.launch(way, folder: made, baseURL: baseURL)
            folder = made
            return made
        }
    }

    /// What one launch measured.
    struct Launch {
        var fromSpawn: Int
        var fromFirstLine: Int
        var onMainActor: Int
        var mainThreadCPU: Int
        var peakResidentKB: Int
    }

    struct LaunchFailed: Error, CustomStringConvertible {
        var description: String
    }

    static func register(_ fixture: Fixture) {
        let lines: [(String, LaunchChild.Way, warm: Bool)] = [
            ("raw AsyncHTTPClient, no Runway", .raw, false),
            ("Runway opened on the main actor, cold", .onMainActor, false),
            ("Runway opened on the main actor, warm", .onMainActor, true),
            ("Runway opened off the main actor, cold", .offMainActor, false),
            ("Runway opened off the main actor, warm", .offMainActor, true),
        ]
        for (title, way, warm) in lines {
            let fromSpawn = metric("from spawn (µs)")
            let fromFirstLine = metric("from the process's first line (µs)")
            let onMainActor = metric("launch code on the main actor (µs)")
            let mainThreadCPU = metric("main thread CPU (µs)")
            let peakResident = metric("peak resident (KB)")
            let configuration = Benchmark.Configuration(
                metrics: [fromSpawn, fromFirstLine, onMainActor, mainThreadCPU, peakResident], scalingFactor: .one,
                maxDuration: .seconds(20), maxIterations: 12)
            let warmFolder = WarmFolder()
            Benchmark("Launch to the first delivered load: \(title)", configuration: configuration) { benchmark in
                guard let server = fixture.server else { throw FixtureError.notStarted }
                let folder = warm ? try warmFolder.prepared(way, baseURL: server.baseURL) : try newFolder()
                defer { if !warm { try? FileManager.default.removeItem(at: folder) } }
                let launch = try Self.launch(way, folder: folder, baseURL: server.baseURL)
                benchmark.measurement(fromSpawn, launch.fromSpawn)
                benchmark.measurement(fromFirstLine, launch.fromFirstLine)
                benchmark.measurement(onMainActor, launch.onMainActor)
                benchmark.measurement(mainThreadCPU, launch.mainThreadCPU)
                benchmark.measurement(peakResident, launch.peakResidentKB)
            }
        }
    }

    static func metric(_ name: String) -> BenchmarkMetric {
        .custom(name, polarity: .prefersSmaller, useScalingFactor: false)
    }

    static func newFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-launch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// One launch in a new process of this executable.
    static func launch(_ way: LaunchChild.Way, folder: URL, baseURL: String) throws -> Launch {
        guard let executable = Bundle.main.executableURL else { throw ListingServer.ServerError.noExecutable }
        let process = Process()
        process.executableURL = executable
        var environment = ProcessInfo.processInfo.environment
        environment[LaunchChild.variable] = "\(way.rawValue) \(folder.path) \(baseURL)"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        // The runner's progress bar comes first; the report is the line after it.
        var text = ""
        func report() -> Substring? {
            text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                .first { $0.hasPrefix("launched ") || $0.hasPrefix("failed ") }
        }
        while report() == nil {
            let chunk = output.fileHandleForReading.availableBytes()
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let elapsed = clock.now - start
        process.waitUntilExit()
        let fields = report()?.split(separator: " ") ?? []
        let numbers = fields.dropFirst().compactMap { Int($0) }
        guard fields.first == "launched", numbers.count == 4 else {
            throw LaunchFailed(description: "the launch said: \(text)")
        }
        return Launch(
            fromSpawn: Int(elapsed.microseconds), fromFirstLine: numbers[0], onMainActor: numbers[1],
            mainThreadCPU: numbers[2], peakResidentKB: numbers[3])
    }
}
