import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import Runway
import RunwayExamples
import RunwayNIO

/// `runway bench --suite soak`: many loads at high concurrency over each transport, against the
/// demo server in a child process, with the client process's resident memory read as it goes.
/// One load in twenty meets a fault — a 503, a connection broken mid-body, a body that is not
/// JSON, a 401 with its challenge, a deadline — so that the paths that end an exchange early are
/// soaked too. A flat line means nothing of a finished request is held.
enum SoakBench {
    /// A load that meets one of the server's faults.
    struct FaultAPI: API {
        var service: ServiceID { .listings }
        var path: String
        var method: HTTPRequest.Method { .get }
        var name: String { "SoakFault" }
        var timeout: Duration
        var retryPolicy: RetryPolicy { .never }
    }

    /// The faults, in turn: each twentieth load takes the next.
    static let faults: [FaultAPI] = [
        FaultAPI(path: "/faults/status/503", timeout: .seconds(30)),
        FaultAPI(path: "/faults/drop", timeout: .seconds(30)),
        FaultAPI(path: "/faults/not-json", timeout: .seconds(30)),
        FaultAPI(path: "/auth/me", timeout: .seconds(30)),
        FaultAPI(path: "/faults/hang", timeout: .milliseconds(200)),
    ]

    static func run(loads: Int, concurrency: Int, logger: Logger) async throws {
        let server = try ChildServer.start(demo: true)
        defer { server.stop() }
        print("Soak: \(loads) loads at \(concurrency) concurrent against \(server.baseURL) (a child process), 5 % faults; live memory of this process (resident, after malloc_trim):")
        try await rawURLSession(server: server, loads: loads, concurrency: concurrency)
        let nio = AsyncHTTPClientTransport()
        for (name, transport) in [("URLSession", URLSessionTransport() as any Transport), ("AsyncHTTPClient", nio)] {
            let engine = Engine(transport: transport, logger: logger)
            try engine.register(listingService(baseURL: server.baseURL))
            let params: Parameters = ["page": 1, "page_size": 16]
            try await line(name, loads: loads, concurrency: concurrency) { index in
                if index % 20 == 19 {
                    let fault = faults[(index / 20) % faults.count]
                    // Drops are keyed per load, so each breaks its connection once.
                    _ = await engine.perform(fault, params: fault.path == "/faults/drop" ? ["key": .string("soak-\(index)"), "failures": 1] : [:])
                } else {
                    _ = try await engine.perform(SecondHandListAPI(), params: params).get()
                }
            }
        }
        try await nio.shutdown()
    }

    /// The same loads — the same paths, faults included — on a plain `URLSession`, set up as
    /// Runway's transport sets up its own, with no Runway above it, first in the run: the slope
    /// of its line is what the platform's URLSession keeps per request, so the Runway line's
    /// slope beyond it is Runway's own.
    static func rawURLSession(server: ChildServer, loads: Int, concurrency: Int) async throws {
        let session = URLSession(configuration: URLSessionTransport.sessionConfiguration())
        defer { session.invalidateAndCancel() }
        try await line("URLSession (raw)", loads: loads, concurrency: concurrency) { index in
            var path = "/listings/esf?client=runway-demo&page=1&page_size=16"
            var timeout = 30.0
            if index % 20 == 19 {
                let fault = faults[(index / 20) % faults.count]
                path = fault.path == "/faults/drop" ? "\(fault.path)?key=raw-\(index)&failures=1" : fault.path
                timeout = fault.timeout == .milliseconds(200) ? 0.2 : 30
            }
            guard let url = URL(string: server.baseURL + path) else { return }
            var request = URLRequest(url: url)
            request.timeoutInterval = timeout
            if let (data, _) = try? await session.data(for: request), index % 20 != 19 {
                _ = try? JSONSerialization.jsonObject(with: data)
            }
        }
    }

    /// Runs `loads` numbered loads at `concurrency`, in four batches, and prints the line of
    /// resident memory: at the start and after each batch.
    static func line(
        _ name: String, loads: Int, concurrency: Int, _ load: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        let counter = LoadCounter()
        var line = "  \(name.padding(toLength: 16, withPad: " ", startingAt: 0)) start \(residentMegabytes()) MB"
        let step = max(loads / 4, 1)
        var done = 0
        while done < loads {
            let batch = min(step, loads - done)
            try await BenchCommand.rate(count: batch, concurrency: concurrency) { try await load(counter.next()) }
            done += batch
            line += " → \(done / 1000)k: \(residentMegabytes()) MB"
        }
        print(line)
    }

    /// Numbers the loads of a run, across its concurrent workers.
    final class LoadCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            count += 1
            return count - 1
        }
    }

    /// The live memory of this process in megabytes: its resident size once the allocator has
    /// given its free pages back (Linux `/proc`; 0 elsewhere).
    static func residentMegabytes() -> Int {
        ProcessStatus.trimHeap()
        return (ProcessStatus.kilobytes("VmRSS") ?? 0) / 1024
    }
}

/// `runway serve` started as a child process, so its CPU and memory are not the client's.
struct ChildServer {
    let process: Process
    let baseURL: String

    /// Starts `runway serve --quiet` with `arguments` added (`--postgres URL`, say), `--demo`
    /// when the benchmark needs the demo's routes, and `--no-verify` unless `verifying`: most
    /// benchmarks measure the routes and the stores, not the signature.
    static func start(_ arguments: [String] = [], demo: Bool = false, verifying: Bool = false) throws -> ChildServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = ["serve", "--quiet"] + (demo ? ["--demo"] : []) + (verifying ? [] : ["--no-verify"]) + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("\n") {
            // Foundation's availableData traps on a read error; this ends the banner there instead.
            guard let chunk = (try? output.fileHandleForReading.read(upToCount: 1)) ?? nil, !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"https?://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            process.terminate()
            throw ChildServerError.noAddress(text)
        }
        return ChildServer(process: process, baseURL: String(text[range]))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

enum ChildServerError: Error {
    case noAddress(String)
}
