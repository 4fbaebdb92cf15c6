import Dispatch
import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayNIO
import RunwayServer
import RunwayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A body that waits for the disk — an app's sink, an upload's file — waits on a thread of
/// dispatch's: Swift's cooperative pool has a thread a core, and exchanges waiting there would
/// stop every task of the app.
///
/// Each blocking test holds as many exchanges as the pool has threads, then asks the pool to run
/// one task: it runs at once where the exchanges wait elsewhere, and not until they are let go
/// where they hold the pool (checked with the sink written and the files read in the task).
@Suite("Bodies that block: off Swift's pool", .timeLimit(.minutes(10)))
struct BlockingBodyTests {
    /// Exchanges held at once: one for each thread of Swift's pool, which has one a core.
    static let held = ProcessInfo.processInfo.activeProcessorCount

    /// Whether a task of Swift's pool runs while `count` exchanges are held: waits, on a thread
    /// of its own (``offThePool(_:)``; on Linux, `DispatchQueue.global()` shares the pool's
    /// threads), for `ready` to be signalled `count` times, then for the task, and then lets the
    /// exchanges go with `release` either way. Two minutes for each wait: what only a failing
    /// run waits out, however busy the machine.
    static func poolRuns(
        whileHolding count: Int, ready: DispatchSemaphore, release: @escaping @Sendable () -> Void
    ) async -> (allHeld: Bool, taskRan: Bool) {
        await offThePool {
            let deadline = DispatchTime.now() + .seconds(120)
            let allHeld = (0..<count).allSatisfy { _ in ready.wait(timeout: deadline) == .success }
            let ran = DispatchSemaphore(value: 0)
            Task.detached { ran.signal() }
            let taskRan = ran.wait(timeout: .now() + .seconds(120)) == .success
            release()
            return (allHeld, taskRan)
        }
    }

    /// `count` transports of `kind` and a demo server, all stopped afterwards: a transport each
    /// exchange, since a URLSession calls its delegate one callback at a time.
    func withTransports(
        _ kind: TransportKind, count: Int, _ body: (DemoServer, [any Transport]) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start()
        let made: [any Transport] = (0..<count).map { _ in
            kind == .asyncHTTPClient ? AsyncHTTPClientTransport() as any Transport : URLSessionTransport()
        }
        try await withCleanup({
            for transport in made { try? await (transport as? AsyncHTTPClientTransport)?.shutdown() }
            await server.stop()
        }) {
            try await body(server, made)
        }
    }

    func request(
        _ server: DemoServer, _ method: HTTPRequest.Method, _ path: String, content: TransportBody? = nil,
        sink: (any ResponseSink)? = nil
    ) -> TransportRequest {
        TransportRequest(
            head: HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path),
            content: content, timeout: .seconds(300), apiName: "Blocking", responseSink: sink)
    }

    @Test("a response sink that blocks is written off Swift's pool, which keeps running tasks meanwhile",
          arguments: TransportKind.allCases)
    func sinkThatBlocks(_ kind: TransportKind) async throws {
        try await withTransports(kind, count: Self.held) { server, transports in
            let size = 200_000
            let entered = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let sinks = transports.map { _ in HeldSink(entered: entered, gate: gate) }
            let downloads = zip(transports, sinks).enumerated().map { index, pair in
                let request = request(server, .get, "/files/blob?size=\(size)&key=held-\(kind)-\(index)", sink: pair.1)
                return Task.detached { try await pair.0.send(request) }
            }
            let (allHeld, taskRan) = await Self.poolRuns(whileHolding: sinks.count, ready: entered) {
                for _ in sinks { gate.signal() }
            }
            for download in downloads {
                let response = try await download.value
                #expect(response.head.status == .ok)
            }
            #expect(allHeld, "every sink must have been written")
            #expect(taskRan, "a task must run while \(sinks.count) sinks block")
            for sink in sinks {
                #expect(sink.received == size)
                #expect(sink.calledInTask == false, "begin and write must run outside Swift's tasks")
            }
        }
    }

    @Test("a sink that refuses a chunk ends the exchange with its own error, and gets no chunk after it",
          arguments: TransportKind.allCases)
    func sinkThatRefuses(_ kind: TransportKind) async throws {
        try await withTransports(kind, count: 1) { server, transports in
            let sink = RefusingSink()
            let error = await #expect(throws: RunwayError.self) {
                try await transports[0].send(request(server, .get, "/files/blob?size=\(8 << 20)&key=refused", sink: sink))
            }
            #expect(
                error.map { "\($0)" }?.contains(RefusingSink.refusal) == true, "the sink's own error: \(String(describing: error))")
            #expect(sink.writes == 1, "no chunk after the refused one")
        }
    }

    /// How an upload's body holds a file: alone (AsyncHTTPClient reads it as it sends), or in a
    /// multipart form (URLSession, which sends bytes or one file, first copies the form to a file).
    enum Shape: String, CaseIterable, CustomTestStringConvertible {
        case file
        case form
        var testDescription: String { rawValue }
    }

    @Test("an upload whose file blocks is read off Swift's pool, which keeps running tasks meanwhile",
          arguments: [(TransportKind.asyncHTTPClient, Shape.file), (.asyncHTTPClient, .form), (.urlSession, .form)])
    func uploadFromFileThatBlocks(_ kind: TransportKind, _ shape: Shape) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-blocking-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A pipe with a name: reading it waits until the test writes, as a slow disk would.
        let pipes = try (0..<Self.held).map { index in
            let url = folder.appendingPathComponent("body-\(index)")
            guard mkfifo(url.path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
            return url
        }
        let length = 100_000
        let (head, tail) = (Data("--form\r\n\r\n".utf8), Data("\r\n--form--\r\n".utf8))
        let sent = shape == .file ? length : head.count + length + tail.count
        try await withTransports(kind, count: pipes.count) { server, transports in
            let uploads = zip(transports, pipes).map { transport, pipe in
                let file = TransportBody.Segment.file(pipe, length: Int64(length))
                let body = TransportBody(segments: shape == .file ? [file] : [.bytes(head), file, .bytes(tail)])
                let request = request(server, .post, "/upload/raw?digest=none", content: body)
                return Task.detached { try await transport.send(request) }
            }
            // Opening a pipe to write waits until its reader opened it: then the reader waits for bytes.
            let opened = DispatchSemaphore(value: 0)
            let writers = Locked([Int32]())
            for pipe in pipes {
                Thread {
                    let descriptor = open(pipe.path, O_WRONLY)
                    writers.withLock { $0.append(descriptor) }
                    opened.signal()
                }.start()
            }
            let (allHeld, taskRan) = await Self.poolRuns(whileHolding: pipes.count, ready: opened) {
                // A pipe nobody read: a reader of the test's own lets its writer's `open` return.
                let readers = pipes.map { open($0.path, O_RDONLY | O_NONBLOCK) }
                let bytes = [UInt8](repeating: 0x61, count: length)
                for descriptor in writers.withLock({ $0 }) where descriptor >= 0 {
                    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    close(descriptor)
                }
                for descriptor in readers where descriptor >= 0 { close(descriptor) }
            }
            #expect(allHeld, "every upload must have opened its file")
            #expect(taskRan, "a task must run while \(pipes.count) uploads wait for their files")
            for upload in uploads {
                let response = try await upload.value
                #expect(response.head.status == .ok)
                let answer = try JSONParser.parse(response.body)
                #expect(answer["bytes"]?.intValue == sent)
            }
        }
    }
}

/// A sink that waits at its first bytes until the test lets it go, and notes whether it was
/// ever called inside a Swift task.
private final class HeldSink: ResponseSink, @unchecked Sendable {
    private struct State {
        var received = 0
        var calledInTask = false
    }

    private let entered: DispatchSemaphore
    private let gate: DispatchSemaphore
    private let state = Locked(State())

    init(entered: DispatchSemaphore, gate: DispatchSemaphore) {
        self.entered = entered
        self.gate = gate
    }

    var received: Int { state.withLock { $0.received } }
    var calledInTask: Bool { state.withLock { $0.calledInTask } }

    func begin(_ head: HTTPResponse) throws {
        let inTask = withUnsafeCurrentTask { $0 != nil }
        state.withLock { $0.calledInTask = $0.calledInTask || inTask }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        let inTask = withUnsafeCurrentTask { $0 != nil }
        let first = state.withLock { state in
            defer { state.received += bytes.count }
            state.calledInTask = state.calledInTask || inTask
            return state.received == 0
        }
        guard first else { return }
        entered.signal()
        gate.wait()
    }
}

/// A sink that refuses its first chunk, as a full disk would, and counts what it was handed.
private final class RefusingSink: ResponseSink, @unchecked Sendable {
    static let refusal = "the disk is full"

    private let count = Locked(0)

    var writes: Int { count.withLock { $0 } }

    func begin(_ head: HTTPResponse) throws {}

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        count.withLock { $0 += 1 }
        throw RunwayError.transport(description: Self.refusal)
    }
}
