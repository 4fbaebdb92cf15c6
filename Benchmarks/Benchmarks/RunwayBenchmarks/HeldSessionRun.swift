import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Runway
import RunwayNIO

/// What a download into a slow sink does to other loads: on Linux a URLSession transport's delegate
/// queue lets at most `DispatchedDelegateQueue.room` chunks wait, then holds the session's work
/// queue — and Swift 6.3's Foundation runs every session's work queue on one shared serial queue —
/// until the sink takes one. The profiling mode's `sessionheld` way (the small loads on the
/// download's own transport), `sessionapart` (on a transport of their own), `sessionshared` (on
/// `URLSession.shared`) and `ahcheld` (download and loads over one AsyncHTTPClient transport): a
/// 256 MiB download into a sink that takes 1 ms a chunk (a slow disk; URLSession's chunks are 16
/// KiB, about 16 MB/s), and, from its first chunk on, COUNT sequential loads of `/listings` through
/// an engine (or, `sessionshared`, through `URLSession.shared`), each timed. Prints each load's
/// time, then their median, 90th percentile and longest.
enum HeldSessionRun {
    /// A sink that takes `pause` a chunk, and reports its first chunk.
    final class SlowSink: ResponseSink {
        private let pause: Duration
        private let started = NIOLockedValueBox<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        init(pause: Duration) {
            self.pause = pause
        }

        func begin(_ head: HTTPResponse) throws {}

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            let waiter = started.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                defer { state = (true, nil) }
                return state.waiter
            }
            waiter?.resume()
            // The slow disk this sink stands for: the subject of the measurement, not a wait.
            let (seconds, attoseconds) = pause.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        }

        /// Returns once the first chunk has arrived.
        func firstChunk() async {
            await withCheckedContinuation { continuation in
                let done = started.withLockedValue { state -> Bool in
                    if !state.done { state.waiter = continuation }
                    return state.done
                }
                if done { continuation.resume() }
            }
        }
    }

    /// `overAsyncHTTPClient`: the download and the loads over one `AsyncHTTPClientTransport`
    /// instead (the `ahcheld` way), whose backpressure is the connection's.
    static func run(
        sameTransport: Bool, count: Int, base: String, host: String, port: Int, logger: Logger, rawSession: Bool = false,
        overAsyncHTTPClient: Bool = false
    ) async throws {
        let downloads: any Transport = overAsyncHTTPClient ? AsyncHTTPClientTransport() : URLSessionTransport()
        let loads = sameTransport || overAsyncHTTPClient ? downloads : URLSessionTransport()
        let engine = Engine(transport: loads, logger: logger)
        try engine.register(Service(id: .bench, baseURLs: [.release: base]))
        let sink = SlowSink(pause: .milliseconds(1))
        let head = HTTPRequest(method: .get, scheme: "http", authority: "\(host):\(port)", path: "/blob?size=\(256 << 20)")
        let download = Task {
            try await downloads.send(
                TransportRequest(head: head, content: nil, timeout: .seconds(600), apiName: "blob", responseSink: sink))
        }
        await sink.firstChunk()
        func milliseconds(_ duration: Duration) -> String {
            String(format: "%.1f", Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1e3)
        }
        let clock = ContinuousClock()
        var times: [Duration] = []
        for _ in 0..<count {
            let start = clock.now
            if rawSession, let url = URL(string: base + "/listings") {
                _ = try await URLSession.shared.data(from: url)
            } else {
                try await Fixture.shared.runwayEngine(engine)
            }
            times.append(clock.now - start)
        }
        let downloaded = await download.result
        print("each load in turn (ms):", times.map { milliseconds($0) }.joined(separator: " "))
        if case .failure(let error) = downloaded { print("the download failed: \(error)") }
        times.sort()
        let median = times[times.count / 2]
        let ninetieth = times[min(times.count - 1, times.count * 9 / 10)]
        let longest = times[times.count - 1]
        let way = overAsyncHTTPClient ? "ahcheld" : sameTransport ? "sessionheld" : rawSession ? "sessionshared" : "sessionapart"
        print(
            "\(way): \(count) loads beside a held download, median \(milliseconds(median)) ms,"
                + " 90th percentile \(milliseconds(ninetieth)) ms, longest \(milliseconds(longest)) ms")
    }
}
