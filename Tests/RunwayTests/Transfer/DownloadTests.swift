import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayNIO
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Synchronization
import Testing

/// A container in a fresh temporary folder.
func makeTemporaryContainer() throws -> (Container, URL) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("runway-container-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    return (Container(root: root), root)
}

/// Whether `url` holds exactly the demo server's blob of `size` bytes (of `version`). Compared a
/// slice at a time (memcmp), so that megabytes cost milliseconds even in a debug build.
func isBlob(_ url: URL, size: Int64, version: String = "1") throws -> Bool {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    var offset: Int64 = 0
    while let chunk = try handle.read(upToCount: TransferRoutes.blobChunk), !chunk.isEmpty {
        guard chunk == Data(TransferRoutes.blobBytes(at: offset, count: chunk.count, version: version)) else { return false }
        offset += Int64(chunk.count)
    }
    return offset == size
}

/// The blob route, as an API that retries a lost connection.
struct BlobAPI: API {
    var service: ServiceID { .test }
    var path: String { "/files/blob" }
    var method: HTTPRequest.Method { .get }
    var retryPolicy: RetryPolicy = RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1))
    /// Megabytes on a busy machine can take longer than the default 20 s, and a timed-out try is
    /// one more request than these tests count.
    var timeout: Duration { .seconds(300) }
}

@Suite("Downloads", .timeLimit(.minutes(10)))
struct DownloadTests {
    @Test("a download is written to the caches role, never to memory, with progress up to its size",
          arguments: TransportKind.allCases)
    func toCaches(_ kind: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 5 * 1024 * 1024 + 3
        try await withHarness(kind) { harness in
            let download = harness.engine.download(
                BlobAPI(), params: ["size": .string("\(size)")], to: .caches("plans/1204.bin", in: container))
            let figures = collect(download.progress)
            let file = try await download.value
            #expect(file.url == (try container.url(for: "plans/1204.bin", in: .caches)))
            #expect(file.byteCount == size)
            // A connection a busy machine lets time out mid-body is resumed from the bytes on
            // disk (the resume tests' subject); whole either way.
            #expect((0..<size).contains(file.resumedFrom))
            #expect(try isBlob(file.url, size: size))
            #expect(!FileManager.default.fileExists(atPath: file.url.path + ".part"))
            #expect(!FileManager.default.fileExists(atPath: file.url.path + ".part.resume"))
            let seen = await figures.value
            #expect(seen.last == TransferProgress(completed: size, total: size))
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        }
    }

    @Test("a connection lost mid-body is resumed with Range from the bytes on disk", arguments: TransportKind.allCases)
    func resumesAfterLostConnection(_ kind: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 4 * 1024 * 1024
        try await withHarness(kind) { harness in
            let key = "resume-\(kind)"
            let file = try await harness.engine.download(
                BlobAPI(), params: ["size": .string("\(size)"), "key": .string(key), "drop_after": "1500000"],
                to: .temporary("resume.bin", in: container)
            ).value
            #expect(harness.probe.count("/files/blob/\(key)") == 2)
            #expect(harness.probe.count("/files/blob/\(key)/range=none") == 1)
            #expect(file.resumedFrom > 0)
            #expect(harness.probe.count("/files/blob/\(key)/range=bytes=\(file.resumedFrom)-") == 1)
            #expect(file.byteCount == size)
            #expect(try isBlob(file.url, size: size))
        }
    }

    @Test("a server that ignores ranges sends the file again whole, and the file is still right")
    func serverWithoutRanges() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 3 * 1024 * 1024
        try await withHarness { harness in
            let file = try await harness.engine.download(
                BlobAPI(),
                params: ["size": .string("\(size)"), "key": "no-ranges", "drop_after": "1000000", "ranges": "none"],
                to: .caches("whole.bin", in: container)
            ).value
            #expect(harness.probe.count("/files/blob/no-ranges") == 2)
            #expect(file.resumedFrom == 0)
            #expect(try isBlob(file.url, size: size))
        }
    }

    @Test("a 206 of a changed file (a proxy that ignores If-Range) makes the download start again, never splices",
          arguments: TransportKind.allCases)
    func changedFileBehindProxy(_ kind: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 3 * 1024 * 1024
        try await withHarness(kind) { harness in
            let key = "changed-\(kind)"
            let file = try await harness.engine.download(
                BlobAPI(),
                params: [
                    "size": .string("\(size)"), "key": .string(key), "drop_after": "1000000",
                    "then_version": "2", "if_range": "ignore",
                ],
                to: .caches("changed.bin", in: container)
            ).value
            // Cut short at version 1; the range is answered 206 from version 2; then whole again.
            #expect(harness.probe.count("/files/blob/\(key)") == 3)
            #expect(harness.probe.count("/files/blob/\(key)/range=none") == 2)
            #expect(file.resumedFrom == 0)
            #expect(file.response.headerFields[.eTag] == "\"blob-\(size)-2\"")
            #expect(try isBlob(file.url, size: size, version: "2"), "the file is version 2 throughout")
        }
    }

    /// 206 answers to `Range: bytes=5-` for the rest of a 10-byte file, each the right bytes
    /// under the right validator but not exactly the range it names (the first three found by
    /// `HostileResumeFuzzTests`), with the transports each is tried over.
    static let rangesNotFilled: [(TransportKind, String)] = {
        let shapes = [
            // Its length runs past the range: three bytes of something else after the file.
            "Content-Range: bytes 5-9/*\r\nContent-Length: 8\r\n\r\n56789XYZ",
            // Its length stops short of the range: the file would end at byte 8.
            "Content-Range: bytes 5-9/*\r\nContent-Length: 3\r\n\r\n567",
            // Chunked, with bytes past the range's end.
            "Content-Range: bytes 5-9/10\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n56789XYZ\r\n0\r\n\r\n",
        ]
        // A length that, after the 5 bytes on disk, passes Int64 (it stopped the process once).
        // Over AsyncHTTPClient only: Linux's URLSession traps on such a length itself
        // (`URLSessionPlatformTrapTests`).
        let pastInt64 = "Content-Range: bytes 5-9/*\r\nContent-Length: 9223372036854775803\r\n\r\n56789"
        return TransportKind.allCases.flatMap { kind in shapes.map { (kind, $0) } } + [(.asyncHTTPClient, pastInt64)]
    }()

    @Test("a 206 that is not exactly the range it names makes the download start again, never splices or ends the file early",
          arguments: rangesNotFilled)
    func rangeNotFilled(_ kind: TransportKind, answer: String) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let answered = Mutex(0)
        let server = try await RawHTTPServer.start { _ in
            switch answered.withLock({ count in
                count += 1
                return count
            }) {
            case 1:  // Cut short after 5 of its 10 bytes.
                .init("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 10\r\nConnection: close\r\n\r\n01234")
            case 2: .init("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nConnection: close\r\n" + answer)
            default: .init("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789")
            }
        }
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport = nio ?? URLSessionTransport()
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let engine = Engine(transport: transport)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
            var api = BlobAPI()
            api.retryPolicy = .never
            let destination = DownloadDestination.temporary("ranged.bin", in: container)
            await #expect(throws: RunwayError.connectionLost) { try await engine.download(api, to: destination).value }
            let file = try await engine.download(api, to: destination).value
            #expect(server.heads.count == 3)
            #expect(server.heads.dropFirst().first?.contains("Range: bytes=5-") == true, "the second asked for the rest")
            #expect(file.resumedFrom == 0 && file.byteCount == 10)
            #expect(try Data(contentsOf: file.url) == Data("0123456789".utf8))
        }
    }

    @Test("Last-Modified alone never validates a range: a download cut short starts again whole")
    func lastModifiedIsNoValidator() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 2 * 1024 * 1024
        try await withHarness { harness in
            let file = try await harness.engine.download(
                BlobAPI(),
                params: ["size": .string("\(size)"), "key": "dated", "drop_after": "1000000", "etag": "none"],
                to: .caches("dated.bin", in: container)
            ).value
            #expect(harness.probe.count("/files/blob/dated") == 2)
            #expect(harness.probe.count("/files/blob/dated/range=none") == 2, "no range was asked")
            #expect(file.resumedFrom == 0)
            #expect(try isBlob(file.url, size: size))
        }
    }

    @Test("a download cancelled midway keeps its partial file, and the next call resumes from it")
    func resumesAcrossCalls() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let size: Int64 = 2 * 1024 * 1024
        try await withHarness { harness in
            // The first answer stops after 1 MB and holds the connection open: the download waits.
            var api = BlobAPI()
            api.retryPolicy = .never
            let destination = DownloadDestination.caches("later.bin", in: container)
            let first = harness.engine.download(
                api, params: ["size": .string("\(size)"), "key": "later", "hold_after": "1048576"], to: destination)
            await harness.probe.wait(for: .holdStarted)
            var sawBytes = false
            for await figure in first.progress where figure.completed >= 1_048_576 {
                sawBytes = true
                first.cancel()
            }
            #expect(sawBytes)
            await #expect(throws: RunwayError.cancelled) { try await first.value }
            let partial = try destination.url().appendingPathExtension("part")
            #expect(FileManager.default.fileExists(atPath: partial.path))
            #expect(try permissions(partial) == 0o600, "a partial download is readable by this user only")
            #expect(try permissions(partial.appendingPathExtension("resume")) == 0o600)
            // A partial file an older version left readable to others is tightened on resume.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: partial.path)

            let second = try await harness.engine.download(
                api, params: ["size": .string("\(size)"), "key": "later", "hold_after": "1048576"], to: destination
            ).value
            #expect(second.resumedFrom == 1_048_576)
            #expect(try isBlob(second.url, size: size))
            #expect(try permissions(second.url) == 0o600)
        }
    }

    @Test("the API's timeout covers the whole download; the bytes that came stay for a resume",
          arguments: TransportKind.allCases)
    func timeout(_ kind: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withHarness(kind) { harness in
            // The answer stops after 64 KiB and holds the connection: only the deadline ends it.
            let api = AdHocAPI(path: "/files/blob", timeout: .seconds(1))
            let destination = DownloadDestination.temporary("slow.bin", in: container)
            let download = harness.engine.download(
                api, params: ["size": "1000000", "key": .string("slow-\(kind)"), "hold_after": "65536"], to: destination)
            let figures = collect(download.progress)
            await #expect(throws: RunwayError.timeout) { try await download.value }
            // Whatever arrived before the deadline is on disk, exactly (how much did depends on
            // how busy the machine is).
            let arrived = await figures.value.last?.completed ?? 0
            let partial = try destination.url().appendingPathExtension("part")
            let kept = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.int64Value
            // No answer at all before the deadline leaves no partial file.
            #expect((kept ?? 0) == arrived)
            #expect(arrived <= 65_536)
            #expect(!FileManager.default.fileExists(atPath: try destination.url().path))
        }
    }

    @Test("an error answer is a typed failure with its body, and no file appears")
    func errorAnswer() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withHarness { harness in
            let body: Data
            do throws(RunwayError) {
                let file = try await harness.engine.download(
                    AdHocAPI(path: "/faults/status/404"), to: .caches("missing.bin", in: container)
                ).value
                Issue.record("expected a 404, got \(file)")
                return
            } catch {
                guard case .httpStatus(404, let answered) = error else {
                    Issue.record("expected a 404, got \(error)")
                    return
                }
                body = answered
            }
            #expect(String(decoding: body, as: UTF8.self).contains("Status 404"))
            let destination = try container.url(for: "missing.bin", in: .caches)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    @Test("a destination that climbs out of its role is refused before anything is sent")
    func escapingDestination() async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withHarness { harness in
            await #expect(throws: RunwayError.self) {
                try await harness.engine.download(BlobAPI(), to: .caches("../../etc/x", in: container)).value
            }
            #expect(harness.probe.count("/files/blob/default") == 0)
        }
    }
}

/// The POSIX permission bits of the file at `url`.
func permissions(_ url: URL) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber).intValue
}
