import Foundation
import Logging
import RunwayTestSupport
import Testing
@testable import Runway

/// A download's steps on the disk between its exchanges — the partial file's size and note,
/// read before an attempt that resumes it, and the finished file moved into place — run as
/// `BlockingWork`: on a dispatch queue of their own, never on a thread of Swift's cooperative
/// pool, which a wait for the disk would take from every other task.
///
/// Each step logs a debug line where it runs; the log capture notes whether it ran as
/// blocking work.
@Suite("Downloads: the disk between exchanges", .timeLimit(.minutes(5)))
struct DownloadDiskWorkTests {
    @Test("a download resumed after a lost connection reads its partial file and moves the finished one as blocking work",
          arguments: TransportKind.allCases)
    func diskWorkOffThePool(_ kind: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 2 * 1024 * 1024
        try await withServer(kind) { transport, server in
            let log = LogCapture { BlockingWork.isCurrent }
            let engine = Engine(transport: transport, logger: Logger(label: "runway.test") { _ in log })
            try Harness(server: server, engine: engine, log: log).registerServices()
            let file = try await engine.download(
                BlobAPI(), params: ["size": .string("\(size)"), "key": .string("disk-\(kind)"), "drop_after": "1000000"],
                to: .temporary("disk.bin", in: container)
            ).value
            #expect(file.resumedFrom > 0, "the second attempt resumed the partial file")
            #expect(try isBlob(file.url, size: size))

            let resumed = try #require(log.lines.first { $0.message == "runway download: resuming the partial file" })
            #expect(resumed.metadata["from"] == "\(file.resumedFrom)")
            #expect(resumed.probed, "the partial file was read on a thread of Swift's pool")
            let placed = try #require(log.lines.first { $0.message == "runway download: the file is in place" })
            #expect(placed.metadata["bytes"] == "\(size)")
            #expect(placed.probed, "the file was moved into place on a thread of Swift's pool")
        }
    }
}
