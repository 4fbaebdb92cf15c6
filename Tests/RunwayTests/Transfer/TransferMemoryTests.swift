import Foundation
import RunwayTestSupport
import Testing

/// The `runway` executable that `swift test` builds beside the test bundle (in its build
/// folder, debug or release), or in the package's default debug folder.
func runwayExecutable() -> URL {
    let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("runway"),
        packageRoot.appendingPathComponent(".build/debug/runway"),
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]
}

/// Starts `runway` with `arguments` at a lower scheduling priority (`niceness`, default the
/// lowest), so that the transfers' bursts of CPU do not starve the tests running beside them,
/// and returns it with its standard output (standard error is dropped).
///
/// A child whose own progress a test waits on through many rounds (the operation log's kill
/// test) asks for less: at the lowest priority beside eight CPU-bound processes it gets almost
/// no CPU at all, and the test's run stretches past any sensible limit.
func startNiced(_ arguments: [String], niceness: Int = 19) throws -> (ChildProcess, FileHandle) {
    let process = ChildProcess("/usr/bin/nice", ["-n", "\(niceness)", runwayExecutable().path] + arguments, output: .pipe)
    try process.run()
    guard let output = process.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
    return (process, output)
}

/// Runs `runway` with `arguments` in a child process and returns its last line of output,
/// parsed as JSON. The wait happens off the pool (``offThePool(_:)``): blocking one of the few
/// threads Swift concurrency runs every test on would stall the rest of the suite for the
/// child's whole run.
///
/// The child runs at niceness 5: a transfer measured at the lowest priority beside CPU-bound
/// processes is starved, and Linux's URLSession, which reads the socket on a thread of its own
/// with no flow control, queues the chunks its delegate has not yet taken — a 48 MiB download
/// peaked 30 MB above its start that way beside eight `yes`.
func runRunway(_ arguments: [String]) async throws -> [String: Any] {
    let (process, reader) = try startNiced(arguments, niceness: 5)
    let data = await offThePool {
        let data = reader.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").last,
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else {
        throw TransferChildFailed(status: process.terminationStatus, output: text)
    }
    return object
}

struct TransferChildFailed: Error {
    var status: Int32
    var output: String
}

/// `runway serve --quiet` in a child process: the transfers' bytes never pass through this
/// process's event loops, which every other test of the suite shares.
final class ChildDemoServer: Sendable {
    let process: ChildProcess
    let baseURL: String

    init() async throws {
        let (process, reader) = try startNiced(["serve", "--quiet", "--demo"])
        let line = await offThePool {
            var text = ""
            while !text.contains("\n") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        guard let start = line.range(of: "http://"),
            let url = line[start.lowerBound...].split(separator: " ").first
        else {
            process.terminate()
            throw TransferChildFailed(status: -1, output: line)
        }
        self.process = process
        self.baseURL = String(url)
    }

    func stop() async {
        process.terminate()
        let process = self.process
        await offThePool { process.waitUntilExit() }
    }
}

/// A 48 MiB upload and download between two child processes (`runway serve` and `runway
/// transfer`), with the client's peak resident memory read before and after the transfer: a
/// streamed file adds a few megabytes (the same holds for 1 GiB: see the Credentials and transfers article); one held in
/// memory would add its whole size.
@Suite("Transfer memory", .serialized)
struct TransferMemoryTests {
    static let fileSize: Int64 = 48 << 20
    /// What a transfer may add to the client's peak: less than the file, which a body held in
    /// memory adds whole (and usually twice, with a copy). Streaming adds 8–18 MB on an idle
    /// machine (a fixed 8–9 MB for the runtime's and the client's first use, then chunks in
    /// flight), and up to 33 MB for a child starved of CPU beside the rest of the suite — not
    /// yet explained in full: for a URLSession download on Linux, chunks its curl thread queues
    /// for the delegate with no flow control; for the rest, most likely freed chunks that
    /// several threads' malloc arenas keep (not measured).
    static let allowance = Int(fileSize) - (8 << 20)

    @Test("a 48 MiB file uploaded as a multipart form never sits in the process's memory")
    func upload() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: runwayExecutable().path), "swift test builds runway")
        let file = try makeSparseFile(Self.fileSize)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }

        let server = try await ChildDemoServer()
        try await withCleanup({ await server.stop() }) {
            // One transport after the other: both at once would only measure the machine.
            for transport in ["ahc", "urlsession"] {
                let report = try await runRunway([
                    "transfer", "upload", file.path, "--multipart", "--to", "\(server.baseURL)/upload/raw?digest=none",
                    "--transport", transport,
                ])
                let answer = try #require((report["response"] as? String).map { Data($0.utf8) })
                let received = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
                #expect((received?["bytes"] as? Int).map { $0 > Int(Self.fileSize) } == true)
                let peak = try #require(report["peakResidentBytes"] as? Int)
                let before = try #require(report["peakBeforeBytes"] as? Int)
                #expect(peak - before < Self.allowance, "\(transport): \(before / 1_048_576) MB → \(peak / 1_048_576) MB")
            }
        }
    }

    @Test("a 48 MiB download goes to disk, never to the process's memory")
    func download() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("runway-big-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ChildDemoServer()
        try await withCleanup({ await server.stop() }) {
            for transport in ["ahc", "urlsession"] {
                let report = try await runRunway([
                    "transfer", "download", "\(server.baseURL)/files/blob?size=\(Self.fileSize)", "--root", root.path,
                    "--path", "big.bin", "--transport", transport,
                ])
                #expect((report["bytes"] as? Int).map(Int64.init) == Self.fileSize)
                let path = try #require(report["file"] as? String)
                let size = try FileManager.default.attributesOfItem(atPath: path)[.size]
                #expect((size as? NSNumber)?.int64Value == Self.fileSize)
                let peak = try #require(report["peakResidentBytes"] as? Int)
                let before = try #require(report["peakBeforeBytes"] as? Int)
                #expect(peak - before < Self.allowance, "\(transport): \(before / 1_048_576) MB → \(peak / 1_048_576) MB")
                try FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
