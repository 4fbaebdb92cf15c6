import Crypto
import Foundation
import Hummingbird
import RunwayServer
import MultipartKit
import NIOPosix

/// Uploads and downloads for the demo and the tests.
///
/// - `POST|PUT /upload/raw[?digest=none]` — reads the body as it streams (never holding it) and
///   answers its size, SHA-256 (unless `digest=none`) and content type.
/// - `POST /upload/hold[?gate=KEY]` — takes the body's first chunk, signals `holdStarted`, and
///   reads no more until the test opens gate `KEY` (default `upload-hold`), so an upload stays
///   in flight; signals `holdClosed` when it then finds the client gone.
/// - `POST /upload/multipart` — parses a `multipart/form-data` body (up to 64 MB) and answers
///   each part's name, file name, content type, size and SHA-256.
/// - `GET /files/blob?size=&version=&key=&drop_after=&ranges=` — `size` bytes of
///   ``blobBytes(at:count:version:)``, with a strong `ETag` per size and version. Honours
///   `Range: bytes=N-` with a matching `If-Range` (206), unless `ranges=none`. With `drop_after`,
///   the first request for `key` breaks the connection after that many bytes; with `hold_after`,
///   it stops sending after that many and holds the connection until the client leaves. The
///   faults of a file that changes behind a cache: `then_version=V` serves version `V` from the
///   second request for `key` on; `if_range=ignore` answers every range with a 206 whatever
///   `If-Range` says (as some proxies do); `etag=none` sends only `Last-Modified`.
public enum TransferRoutes {
    /// The bytes at `offset` of a blob's `version`, at most ``blobChunk`` of them: a
    /// pseudo-random pattern whose period (65,521, a prime) shares no factor with chunk or page
    /// sizes, so a resumed file spliced at the wrong place does not match; each version other
    /// than `"1"` starts the pattern elsewhere, so a file spliced from two versions does not either.
    public static func blobBytes(at offset: Int64, count: Int, version: String = "1") -> ArraySlice<UInt8> {
        let shift = version == "1" ? 0 : Int64(version.utf8.reduce(7) { ($0 &* 31 &+ Int($1)) % period } + 1)
        let phase = Int((offset + shift) % Int64(period))
        return pattern[phase..<phase + min(max(count, 0), blobChunk)]
    }

    /// The most bytes one ``blobBytes(at:count:version:)`` slice holds.
    public static let blobChunk = 65_536

    /// The largest blob `/files/blob` makes: 1 TiB, far past any test's, far below `Int64.max`.
    static let largestBlob: Int64 = 1 << 40

    static let period = 65_521
    /// One period, then the next 64 KiB again, so any chunk of up to 64 KiB is one slice.
    static let pattern: [UInt8] = {
        var state: UInt32 = 0x9E37_79B9
        var bytes = [UInt8]()
        bytes.reserveCapacity(period + 65_536)
        for _ in 0..<period {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            bytes.append(UInt8(truncatingIfNeeded: state >> 24))
        }
        for index in 0..<blobChunk { bytes.append(bytes[index % period]) }
        return bytes
    }()

    static func add(to router: some RouterMethods<ServerRequestContext>, probe: ServerProbe) {
        let raw: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, _ in
            // `digest=none` only counts: hashing a gigabyte costs the server seconds of CPU.
            var hasher: SHA256? = request.uri.queryParameters["digest"] == "none" ? nil : SHA256()
            var count = 0
            for try await buffer in request.body {
                if hasher != nil { buffer.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) } }
                count += buffer.readableBytes
            }
            probe.record("/upload/raw")
            return JSONResponse.make([
                "bytes": count, "sha256": hasher.map { hex($0.finalize()) } ?? "",
                "contentType": request.headers[.contentType] ?? "",
            ])
        }
        router.post("/upload/raw", use: raw)
        router.put("/upload/raw", use: raw)
        router.post("/upload/hold") { request, _ -> Response in
            probe.record("/upload/hold")
            // Takes the first chunk, then reads nothing until the test opens gate `gate`: the
            // socket buffers fill and the upload stays in flight for as long as the test needs.
            // Then it reads at full speed, so a client that left is seen at once.
            let gate = request.uri.queryParameters["gate"].map(String.init) ?? "upload-hold"
            var started = false
            do {
                for try await _ in request.body where !started {
                    started = true
                    probe.signal(.holdStarted)
                    await probe.passGate(gate)
                }
            } catch {
                probe.signal(.holdClosed)
                throw error
            }
            return JSONResponse.make(["complete": true])
        }

        router.post("/upload/multipart") { request, _ -> Response in
            guard let contentType = request.headers[.contentType], let boundary = boundary(of: contentType) else {
                return JSONResponse.make(["error": "not a multipart/form-data body"], status: .badRequest)
            }
            // MultipartKit's streaming parser: an independent reading of what the client wrote,
            // each part hashed as it arrives, so a large form never sits in memory here either.
            // It looks at every byte, so it runs on NIO's blocking pool, never on Swift
            // concurrency's shared threads: unoptimised (as `swift test` builds it), a 700 KB form
            // kept both of a 2-core machine's shared threads busy for seconds, and every other
            // task of the process — each test's loads and servers — waited behind it.
            let form = MultipartDigest(boundary: boundary)
            for try await buffer in request.body {
                let parsed = try await NIOThreadPool.singleton.runIfActive { form.parse(buffer) }
                guard parsed else {
                    return JSONResponse.make(["error": "malformed multipart body"], status: .badRequest)
                }
            }
            guard !form.parts.isEmpty else {
                return JSONResponse.make(["error": "no complete part"], status: .badRequest)
            }
            probe.record("/upload/multipart")
            return JSONResponse.make(["parts": form.parts.map(\.summary)])
        }

        router.get("/files/blob") { request, _ -> Response in
            let query = request.uri.queryParameters
            let size = query["size"].flatMap { Int64(String($0)) } ?? 1 << 20
            let key = query["key"].map(String.init) ?? "default"
            let dropAfter = query["drop_after"].flatMap { Int64(String($0)) }
            let holdAfter = query["hold_after"].flatMap { Int64(String($0)) }
            // Sizes and offsets a client names are input: past these bounds they are refused,
            // not added up past `Int64`.
            guard (0...Self.largestBlob).contains(size), [dropAfter, holdAfter].allSatisfy({ $0.map { (0...size).contains($0) } ?? true })
            else {
                return JSONResponse.make(["error": "size, drop_after or hold_after out of range"], status: .badRequest)
            }
            let honoursRanges = query["ranges"] != "none"
            let attempt = probe.record("/files/blob/\(key)")
            let first = query["version"].map(String.init) ?? "1"
            let version = attempt > 1 ? query["then_version"].map(String.init) ?? first : first
            let etag = "\"blob-\(size)-\(version)\""
            let ignoresIfRange = query["if_range"] == "ignore"
            let range = request.headers[.range]
            probe.record("/files/blob/\(key)/range=\(range ?? "none")")

            var start: Int64 = 0
            var status = HTTPResponse.Status.ok
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            if query["etag"] == "none" {
                headers[.lastModified] = "Wed, 25 Nov 2026 08:00:00 GMT"
            } else {
                headers[.eTag] = etag
            }
            headers[.acceptRanges] = honoursRanges ? "bytes" : "none"
            if honoursRanges, let range, ignoresIfRange || (request.headers[.ifRange].map({ $0 == etag }) ?? true),
                range.hasPrefix("bytes="), range.hasSuffix("-"),
                let from = Int64(range.dropFirst("bytes=".count).dropLast()), from >= 0
            {
                guard from < size else {
                    headers[.contentRange] = "bytes */\(size)"
                    return Response(status: .rangeNotSatisfiable, headers: headers)
                }
                start = from
                status = .partialContent
                headers[.contentRange] = "bytes \(from)-\(size - 1)/\(size)"
            }
            let stop = attempt == 1 ? (dropAfter ?? holdAfter).map { min(size, start + $0) } : nil
            let holds = holdAfter != nil
            let from = start
            return Response(
                status: status, headers: headers,
                body: ResponseBody(contentLength: Int(size - from)) { writer in
                    var offset = from
                    let end = stop ?? size
                    while offset < end {
                        let count = Int(min(Int64(blobChunk), end - offset))
                        try await writer.write(ByteBuffer(bytes: blobBytes(at: offset, count: count, version: version)))
                        offset += Int64(count)
                    }
                    // Cut short on purpose: the connection breaks (or hangs) before the promised length.
                    if stop != nil, stop != size {
                        if holds { try await FaultRoutes.holdUntilClientLeaves(request, probe: probe) }
                        throw HTTPError(.internalServerError)
                    }
                    try await writer.finish(nil)
                })
        }
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// The boundary parameter of a `multipart/form-data` content type.
private func boundary(of contentType: String) -> String? {
    guard contentType.lowercased().hasPrefix("multipart/form-data"), let range = contentType.range(of: "boundary=") else {
        return nil
    }
    var boundary = String(contentType[range.upperBound...])
    if let end = boundary.firstIndex(of: ";") { boundary = String(boundary[..<end]) }
    boundary = boundary.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
    return boundary.isEmpty ? nil : boundary
}

/// Each part of a form as MultipartKit's parser reports it: its header fields, size and SHA-256,
/// and the text of small fields.
///
/// Unchecked `Sendable`: one request handler owns it and hands it one chunk at a time to a
/// thread of the blocking pool, awaiting each ``parse(_:)`` before the next, so no two threads
/// ever touch it at once.
private final class MultipartDigest: @unchecked Sendable {
    struct Part {
        var headers: [String: String] = [:]
        var hasher = SHA256()
        var bytes = 0
        var text = Data()

        var summary: [String: Any] {
            let disposition = headers["content-disposition"] ?? ""
            let filename = quoted("filename", in: disposition)
            return [
                "name": quoted("name", in: disposition) ?? "", "filename": filename ?? NSNull(),
                "contentType": headers["content-type"] ?? NSNull(), "bytes": bytes,
                "sha256": TransferRoutes.hex(hasher.finalize()),
                "text": filename == nil ? String(decoding: text, as: UTF8.self) : NSNull(),
            ]
        }
    }

    private let parser: MultipartParser
    private(set) var parts: [Part] = []
    private var current = Part()

    /// Feeds the next chunk of the body to the parser; whether it was well formed.
    func parse(_ buffer: ByteBuffer) -> Bool {
        do {
            try parser.execute(buffer)
            return true
        } catch {
            return false
        }
    }

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in current.headers[name.lowercased()] = value }
        parser.onBody = { [unowned self] buffer in
            buffer.withUnsafeReadableBytes { current.hasher.update(bufferPointer: $0) }
            current.bytes += buffer.readableBytes
            if current.text.count < 4096 { current.text.append(contentsOf: buffer.readableBytesView.prefix(4096)) }
        }
        parser.onPartComplete = { [unowned self] in
            parts.append(current)
            current = Part()
        }
    }
}

/// The value of `key="…"` in a `Content-Disposition` header field.
private func quoted(_ key: String, in field: String) -> String? {
    guard let start = field.range(of: "; \(key)=\"") else { return nil }
    let rest = field[start.upperBound...]
    guard let end = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<end])
}
