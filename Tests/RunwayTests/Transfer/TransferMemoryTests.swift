import Foundation
import RunwayServer
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

/// Runs `runway` with `arguments` in a child process and returns its last line of output,
/// parsed as JSON.
func runRunway(_ arguments: [String]) throws -> [String: Any] {
    let process = Process()
    process.executableURL = runwayExecutable()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
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

/// A 1 GiB upload and download in a child process whose peak resident memory is read: a
/// streamed gigabyte costs tens of megabytes (about 50 MB on an idle machine); one held in
/// memory would cost over a thousand.
@Suite("Transfer memory", .serialized)
struct TransferMemoryTests {
    static let gibibyte: Int64 = 1 << 30
    /// Half the file: a body held in memory cannot stay under it. Not tighter, because the whole
    /// test suite runs beside this test on two cores, and a consumer starved of CPU lets the
    /// transport's buffers fill (URLSession on Linux delivers data without backpressure).
    static let ceiling = 512 * 1024 * 1024

    @Test("a 1 GiB file uploaded as a multipart form never sits in the process's memory")
    func upload() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: runwayExecutable().path), "swift test builds runway")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-big-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.bin")
        // A sparse file: a gigabyte to read, without a gigabyte of disk.
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(Self.gibibyte))
        try handle.close()

        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            // One transport after the other: two gigabytes at once would only measure the machine.
            for transport in ["ahc", "urlsession"] {
                let report = try runRunway([
                    "transfer", "upload", file.path, "--multipart", "--to", "\(server.baseURL)/upload/raw",
                    "--transport", transport,
                ])
                let answer = try #require((report["response"] as? String).map { Data($0.utf8) })
                let received = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
                #expect((received?["bytes"] as? Int).map { $0 > Int(Self.gibibyte) } == true)
                let peak = try #require(report["peakResidentBytes"] as? Int)
                #expect(peak < Self.ceiling, "\(transport): peak resident memory \(peak / 1_048_576) MB for a 1 GiB upload")
            }
        }
    }

    @Test("a 1 GiB download goes to disk, never to the process's memory")
    func download() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("runway-big-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            for transport in ["ahc", "urlsession"] {
                let report = try runRunway([
                    "transfer", "download", "\(server.baseURL)/files/blob?size=\(Self.gibibyte)", "--root", root.path,
                    "--path", "big.bin", "--transport", transport,
                ])
                #expect((report["bytes"] as? Int).map(Int64.init) == Self.gibibyte)
                let path = try #require(report["file"] as? String)
                let size = try FileManager.default.attributesOfItem(atPath: path)[.size]
                #expect((size as? NSNumber)?.int64Value == Self.gibibyte)
                let peak = try #require(report["peakResidentBytes"] as? Int)
                #expect(peak < Self.ceiling, "\(transport): peak resident memory \(peak / 1_048_576) MB for a 1 GiB download")
                try FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
