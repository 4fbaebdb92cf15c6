import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import Runway
import RunwayStorage

/// The API of the profiling mode's download ways: the listing server's `/blob` of zeros.
struct BlobAPI: API {
    var service: ServiceID { .bench }
    var path: String { "/blob" }
    var method: HTTPRequest.Method { .get }
    var retryPolicy: RetryPolicy { .never }
    var cachePolicy: CachePolicy = .none
    var timeout: Duration { .seconds(600) }
}

/// The API of the profiling mode's upload ways: the listing server's `/sink`, which counts.
struct SinkAPI: API {
    var service: ServiceID { .bench }
    var path: String { "/sink" }
    var method: HTTPRequest.Method { .post }
    var retryPolicy: RetryPolicy { .never }
    var cachePolicy: CachePolicy = .none
    var timeout: Duration { .seconds(600) }
}

/// A file moved each way, the profiling mode's transfer ways, over ``AsyncHTTPClientTransport``
/// and over the plain alternative (AsyncHTTPClient's `async` interface, configured as Runway's
/// transport, the file read or written with a `FileHandle` in the task that sends or reads the
/// body): `download` (``Engine/download(_:params:to:loadID:)``) and `rawdownload`, `upload`
/// (``Engine/upload(_:params:body:loadID:)`` of a file) and `rawupload`. Each load is ``size``
/// bytes.
enum TransferRun {
    /// The bytes each transfer moves: enough that the per-chunk work outweighs the exchange's.
    static let size = 64 << 20

    /// Where the files are, a folder of the process's own.
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-bench-\(getpid())")

    static func download(_ engine: Engine) async throws {
        let file = try await engine.download(
            BlobAPI(), params: ["size": .int(size)], to: .temporary("download", in: Container(root: folder))
        ).value
        guard file.byteCount == Int64(size) else { throw FixtureError.unexpectedBody }
    }

    static func rawDownload(_ client: HTTPClient, base: String) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("raw-download")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw FixtureError.notStarted }
        let output = try FileHandle(forWritingTo: url)
        defer { try? output.close() }
        let response = try await client.execute(HTTPClientRequest(url: "\(base)/blob?size=\(size)"), timeout: .seconds(600))
        var written = 0
        for try await chunk in response.body {
            try output.write(contentsOf: Data(chunk.readableBytesView))
            written += chunk.readableBytes
        }
        guard written == size else { throw FixtureError.unexpectedBody }
    }

    /// The file the uploads send, made once.
    static let upload: URL? = {
        let url = folder.appendingPathComponent("upload")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return FileManager.default.createFile(atPath: url.path, contents: Data(count: size)) ? url : nil
    }()

    static func upload(_ engine: Engine) async throws {
        guard let file = upload else { throw FixtureError.notStarted }
        let response = try await engine.upload(SinkAPI(), body: .file(file, contentType: "application/octet-stream")).value
        try check(response.body)
    }

    static func rawUpload(_ client: HTTPClient, base: String) async throws {
        guard let file = upload else { throw FixtureError.notStarted }
        var request = HTTPClientRequest(url: "\(base)/sink")
        request.method = .POST
        request.body = .stream(FileChunks(url: file), length: .known(Int64(size)))
        let response = try await client.execute(request, timeout: .seconds(600))
        try check(Data(try await response.body.collect(upTo: 1 << 10).readableBytesView))
    }

    private static func check(_ answer: Data) throws {
        guard try JSON(parsing: answer)["bytes"]?.intValue == size else { throw FixtureError.unexpectedBody }
    }

    /// A file read 256 KiB at a time in the task that asks, as an app would hand it over.
    struct FileChunks: AsyncSequence, Sendable {
        let url: URL

        func makeAsyncIterator() -> Iterator { Iterator(handle: try? FileHandle(forReadingFrom: url)) }

        struct Iterator: AsyncIteratorProtocol {
            let handle: FileHandle?

            mutating func next() async throws -> ByteBuffer? {
                guard let handle else { throw FixtureError.notStarted }
                guard let chunk = try handle.read(upToCount: 256 << 10), !chunk.isEmpty else {
                    try handle.close()
                    return nil
                }
                return ByteBuffer(bytes: chunk)
            }
        }
    }
}
