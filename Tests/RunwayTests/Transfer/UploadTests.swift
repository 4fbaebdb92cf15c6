import Crypto
import Foundation
import HTTPTypes
import Logging
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// A temporary file of `count` pseudo-random bytes, and its SHA-256.
func makeUploadFile(_ count: Int, name: String = "upload.bin") throws -> (URL, String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-upload-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent(name)
    // xorshift64 from a random seed: different on every run, and a word per step, so that
    // megabytes cost milliseconds even in a debug build.
    var state = UInt64.random(in: 1...UInt64.max)
    var words = [UInt64](repeating: 0, count: (count + 7) / 8)
    for index in words.indices {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        words[index] = state
    }
    let bytes = words.withUnsafeBytes { Data($0.prefix(count)) }
    try bytes.write(to: url)
    return (url, SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
}


/// Collects a transfer's progress figures until it ends.
func collect(_ progress: AsyncStream<TransferProgress>) -> Task<[TransferProgress], Never> {
    Task { await progress.reduce(into: []) { $0.append($1) } }
}

@Suite("Uploads", .timeLimit(.minutes(10)))
struct UploadTests {
    @Test("a file is uploaded as the body, its bytes intact, with progress up to its size",
          arguments: TransportKind.allCases)
    func fileBody(_ kind: TransportKind) async throws {
        let (file, sha256) = try makeUploadFile(3 * 1024 * 1024 + 17)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withHarness(kind) { harness in
            let upload = harness.engine.upload(
                AdHocAPI(path: "/upload/raw", method: .put), body: .file(file, contentType: "application/x-test"))
            let figures = collect(upload.progress)
            let response = try await upload.value
            #expect(response.json?["bytes"]?.intValue == 3 * 1024 * 1024 + 17)
            #expect(response.json?["sha256"]?.stringValue == sha256)
            #expect(response.json?["contentType"]?.stringValue == "application/x-test")
            let seen = await figures.value
            #expect(seen.last == TransferProgress(completed: 3 * 1024 * 1024 + 17, total: 3 * 1024 * 1024 + 17))
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        }
    }

    @Test("a multipart form streams its file part beside text and bytes parts", arguments: TransportKind.allCases)
    func multipart(_ kind: TransportKind) async throws {
        let (file, sha256) = try makeUploadFile(700_000, name: "floor plan.pdf")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withHarness(kind) { harness in
            var form = MultipartForm()
            form.append("Balcony, south", name: "caption")
            form.append(fileAt: file, name: "plan", contentType: "application/pdf")
            form.append(Data([0, 1, 2, 3]), name: "thumb", filename: "t.bin")
            let response = try await harness.engine.upload(
                AdHocAPI(path: "/upload/multipart", method: .post), body: .multipart(form)
            ).value
            let parts = try #require(response.json?["parts"]?.arrayValue)
            #expect(parts.count == 3)
            #expect(parts[0]["name"]?.stringValue == "caption")
            #expect(parts[0]["text"]?.stringValue == "Balcony, south")
            #expect(parts[1]["filename"]?.stringValue == "floor plan.pdf")
            #expect(parts[1]["contentType"]?.stringValue == "application/pdf")
            #expect(parts[1]["bytes"]?.intValue == 700_000)
            #expect(parts[1]["sha256"]?.stringValue == sha256)
            #expect(parts[2]["bytes"]?.intValue == 4)
        }
    }

    @Test("a signed upload is hashed from its file for the signer, as blocking work, and the server's streaming check agrees")
    func signedFileUpload() async throws {
        let (file, _) = try makeUploadFile(600_000)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let secret = SymmetricKey(data: Data("upload-secret-upload-secret-1234".utf8))
        let server = try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["app": [secret]]))
        let nio = AsyncHTTPClientTransport()
        let log = LogCapture { BlockingWork.isCurrent }
        let engine = Engine(transport: nio, logger: Logger(label: "runway.test") { _ in log })
        try engine.register(
            Service(
                id: .test,
                environment: .develop,
                baseURLs: [.develop: server.baseURL],
                credentials: .init(signer: HMACSigner(keyID: "app", secret: secret))))
        try await withCleanup({
            try? await nio.shutdown()
            await server.stop()
        }) {
            var form = MultipartForm()
            form.append(fileAt: file, name: "file")
            let response = try await engine.upload(
                AdHocAPI(path: "/signed/echo/upload", method: .post, responseFormat: .raw), body: .multipart(form)
            ).value
            #expect(response.status == .ok)
            #expect(server.probe.count("/echo") == 1)
            let hashed = try #require(log.lines.first { $0.message == "runway signing: the body's files are hashed" })
            #expect(hashed.probed, "the body's files were read on a thread of Swift's pool")
        }
    }

    @Test("cancelling an upload stops it on the wire", arguments: TransportKind.allCases)
    func cancel(_ kind: TransportKind) async throws {
        // 256 MiB: far more than the socket buffers on both sides can take in (tens of MB with
        // autotuning) while the server reads nothing, so the upload is still in flight when it
        // is cancelled.
        let file = try makeSparseFile(256 << 20)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withHarness(kind) { harness in
            let upload = harness.engine.upload(AdHocAPI(path: "/upload/hold", method: .post), body: .file(file))
            let figures = collect(upload.progress)
            await harness.probe.wait(for: .holdStarted)
            upload.cancel()
            await #expect(throws: RunwayError.cancelled) { try await upload.value }
            // The progress stream ends with the transfer; the server, reading again, finds the
            // connection gone before the body's end.
            _ = await figures.value
            harness.probe.openGate("upload-hold")
            await harness.probe.wait(for: .holdClosed)
        }
    }

    @Test("the API's timeout covers the whole upload, body included", arguments: TransportKind.allCases)
    func timeout(_ kind: TransportKind) async throws {
        let file = try makeSparseFile(256 << 20)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try await withHarness(kind) { harness in
            // The server reads nothing past the first chunk: the body cannot go up within a second.
            let upload = harness.engine.upload(
                AdHocAPI(path: "/upload/hold", method: .post, timeout: .seconds(1)), body: .file(file))
            await #expect(throws: RunwayError.timeout) { try await upload.value }
            harness.probe.openGate("upload-hold")
            await harness.probe.waitForClose(ifSeen: "/upload/hold")
        }
    }
}
