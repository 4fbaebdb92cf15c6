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
/// Each test holds as many exchanges as the pool has threads, then asks the pool to run one
/// task: it runs at once where the exchanges wait elsewhere, and not until they are let go
/// where they hold the pool (checked with the sink written and the files read in the task).
@Suite("AsyncHTTPClient transport: bodies that block", .timeLimit(.minutes(10)))
struct BlockingBodyTests {
    /// Exchanges held at once: one for each thread of Swift's pool, which has one a core.
    static let held = ProcessInfo.processInfo.activeProcessorCount

    /// Whether a task of Swift's pool runs while `count` exchanges are held: waits, on a thread
    /// of its own (on Linux, `DispatchQueue.global()` shares the pool's threads), for `ready` to
    /// be signalled `count` times, then for the task, and then lets the exchanges go with
    /// `release` either way. Two minutes for each wait: what only a
    /// failing run waits out, however busy the machine.
    static func poolRuns(
        whileHolding count: Int, ready: DispatchSemaphore, release: @escaping @Sendable () -> Void
    ) async -> (allHeld: Bool, taskRan: Bool) {
        await withCheckedContinuation { continuation in
            Thread {
                let deadline = DispatchTime.now() + .seconds(120)
                let allHeld = (0..<count).allSatisfy { _ in ready.wait(timeout: deadline) == .success }
                let ran = DispatchSemaphore(value: 0)
                Task.detached { ran.signal() }
                let taskRan = ran.wait(timeout: .now() + .seconds(120)) == .success
                release()
                continuation.resume(returning: (allHeld, taskRan))
            }.start()
        }
    }

    @Test("a response sink that blocks is written off Swift's pool, which keeps running tasks meanwhile")
    func sinkThatBlocks() async throws {
        try await withServerAndTransport { server, transport in
            let size = 200_000
            let entered = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let sinks = (0..<Self.held).map { _ in HeldSink(entered: entered, gate: gate) }
            let downloads = sinks.enumerated().map { index, sink in
                Task.detached {
                    let head = HTTPRequest(
                        method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                        path: "/files/blob?size=\(size)&key=held-\(index)")
                    return try await transport.send(
                        TransportRequest(head: head, content: nil, timeout: .seconds(300), apiName: "Held", responseSink: sink))
                }
            }
            let (allHeld, taskRan) = await Self.poolRuns(whileHolding: Self.held, ready: entered) {
                for _ in sinks { gate.signal() }
            }
            for download in downloads {
                let response = try await download.value
                #expect(response.head.status == .ok)
            }
            #expect(allHeld, "every sink must have been written")
            #expect(taskRan, "a task must run while \(Self.held) sinks block")
            for sink in sinks {
                #expect(sink.received == size)
                #expect(sink.calledInTask == false, "begin and write must run outside Swift's tasks")
            }
        }
    }

    @Test("a sink written off the pool that refuses a chunk ends the exchange with its own error, and gets no chunk after it")
    func sinkThatRefuses() async throws {
        try await withServerAndTransport { server, transport in
            let sink = RefusingSink()
            let head = HTTPRequest(
                method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                path: "/files/blob?size=\(8 << 20)&key=refused")
            let error = await #expect(throws: RunwayError.self) {
                try await transport.send(
                    TransportRequest(head: head, content: nil, timeout: .seconds(300), apiName: "Refused", responseSink: sink))
            }
            #expect(
                error.map { "\($0)" }?.contains(RefusingSink.refusal) == true, "the sink's own error: \(String(describing: error))")
            #expect(sink.writes == 1, "no chunk after the refused one")
        }
    }

    @Test("an upload whose file blocks is read off Swift's pool, which keeps running tasks meanwhile")
    func uploadFromFileThatBlocks() async throws {
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
        try await withServerAndTransport { server, transport in
            let uploads = pipes.map { pipe in
                Task.detached {
                    let head = HTTPRequest(
                        method: .post, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/upload/raw?digest=none")
                    let body = TransportBody(segments: [.file(pipe, length: Int64(length))])
                    return try await transport.send(
                        TransportRequest(head: head, content: body, timeout: .seconds(300), apiName: "Held"))
                }
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
                #expect(answer["bytes"]?.intValue == length)
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
