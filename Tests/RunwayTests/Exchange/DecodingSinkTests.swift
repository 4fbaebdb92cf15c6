import CompressNIO
import Foundation
import HTTPTypes
import NIOCore
import RunwayTestSupport
import Testing

@testable import Runway

/// The engine's content-coding step on its own, fed the way no server can be made to send on
/// purpose: a byte at a time, so that every decision that depends on where a chunk ends (which
/// deflate format, a buffer that fills exactly, a member boundary) is taken at its worst. The
/// conformance matrix covers the same step over real HTTP on both transports.
@Suite("The engine undoes content codings, however the body is cut into chunks", .timeLimit(.minutes(10)))
struct DecodingSinkTests {
    /// 200 KB that compresses well but not to nothing: more than one inflate buffer's worth.
    static let original: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: ($0 * 7919) % 251 ^ ($0 >> 9)) }

    static func coded(_ bytes: [UInt8], _ algorithm: CompressionAlgorithm) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        let compressed = try buffer.compress(with: algorithm)
        return Array(compressed.readableBytesView)
    }

    static func head(_ coding: String?) -> HTTPResponse {
        var fields: HTTPFields = [.contentType: "application/octet-stream", .contentLength: "123"]
        if let coding { fields[.contentEncoding] = coding }
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    /// Runs `bytes` through a sink in chunks of `size` and returns the head and body handed on.
    static func decode(
        _ bytes: [UInt8], coding: String?, chunk size: Int, transportDecodes: Bool = false
    ) throws -> (HTTPResponse?, [UInt8]) {
        let collector = BodyCollector()
        let sink = DecodingSink(target: collector, transportDecodes: transportDecodes)
        try sink.begin(head(coding))
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + size, bytes.count)
            try bytes[offset..<end].withUnsafeBytes { try sink.write($0) }
            offset = end
        }
        try sink.finish()
        return (sink.head, Array(collector.collected))
    }

    @Test("gzip, deflate in zlib's format, and bare deflate decode whole at every chunk size", arguments: [1, 7, 4096, 1 << 20])
    func everyFormat(chunk: Int) throws {
        let codings: [(String, [UInt8])] = [
            ("gzip", try Self.coded(Self.original, .gzip())),
            ("x-gzip", try Self.coded(Self.original, .gzip())),
            ("deflate", try Self.coded(Self.original, .zlib())),
            ("deflate", try Self.coded(Self.original, .deflate())),
        ]
        for (coding, bytes) in codings {
            let (head, body) = try Self.decode(bytes, coding: coding, chunk: chunk)
            #expect(body == Self.original, "\(coding), \(bytes.count) bytes on the wire")
            #expect(head?.headerFields[.contentEncoding] == nil)
            #expect(head?.headerFields[.contentLength] == nil, "the wire length does not describe the body")
        }
    }

    @Test("two codings are undone in the reverse order they were applied")
    func chainedCodings() throws {
        let once = try Self.coded(Self.original, .zlib())
        let twice = try Self.coded(once, .gzip())
        #expect(try Self.decode(twice, coding: "deflate, gzip", chunk: 5).1 == Self.original)
    }

    @Test("a gzip body of two members is both members")
    func twoMembers() throws {
        let first = Array("first half, ".utf8), second = Array("second half".utf8)
        let bytes = try Self.coded(first, .gzip()) + Self.coded(second, .gzip())
        #expect(try Self.decode(bytes, coding: "gzip", chunk: 3).1 == first + second)
    }

    @Test("a stream cut short, bytes that are not the coding, and bytes after its end are refused")
    func refusals() throws {
        let gzip = try Self.coded(Self.original, .gzip())
        #expect(throws: TransportFault.undecodableBody) { try Self.decode(Array(gzip.prefix(gzip.count / 2)), coding: "gzip", chunk: 1000) }
        #expect(throws: TransportFault.undecodableBody) { try Self.decode(Array(gzip.dropLast(4)), coding: "gzip", chunk: 1000) }
        #expect(throws: TransportFault.undecodableBody) { try Self.decode(Array("not gzip at all".utf8), coding: "gzip", chunk: 4) }
        #expect(throws: TransportFault.undecodableBody) { try Self.decode([0x78], coding: "deflate", chunk: 1) }
        let zlib = try Self.coded(Self.original, .zlib())
        #expect(throws: TransportFault.undecodableBody) { try Self.decode(zlib + [0, 0, 0], coding: "deflate", chunk: 1000) }
    }

    @Test("a head alone may name a coding: nothing to decode, nothing refused")
    func headAlone() throws {
        let (head, body) = try Self.decode([], coding: "gzip", chunk: 1)
        #expect(body.isEmpty)
        #expect(head?.headerFields[.contentEncoding] == nil)
    }

    @Test("a body the transport already decoded passes as it is; only the head is described")
    func transportDecoded() throws {
        let (head, body) = try Self.decode(Self.original, coding: "gzip", chunk: 999, transportDecodes: true)
        #expect(body == Self.original)
        #expect(head?.headerFields[.contentEncoding] == nil)
    }

    @Test("a coding nobody undoes keeps its name, and the collector refuses the body")
    func foreignCoding() throws {
        #expect(throws: RunwayError.invalidResponse(
            reason: "the body is in the content coding br, which was not asked for and cannot be decoded")) {
            try Self.decode([1, 2, 3], coding: "br", chunk: 3)
        }
        let (head, body) = try Self.decode(Self.original, coding: "identity", chunk: 4096)
        #expect(body == Self.original)
        #expect(head?.headerFields[.contentEncoding] == "identity")
    }

    @Test("the collector behind the step counts decoded bytes: a small body that inflates past the cap is refused")
    func capCountsDecodedBytes() throws {
        let gzip = try Self.coded(Self.original, .gzip())
        let collector = BodyCollector(limit: 100_000)
        let sink = DecodingSink(target: collector, transportDecodes: false)
        try sink.begin(Self.head("gzip"))
        #expect(gzip.count < 100_000)
        #expect(throws: RunwayError.invalidResponse(reason: "the body is larger than allowed (100000 bytes)")) {
            try gzip.withUnsafeBytes { try sink.write($0) }
        }
    }
}

/// An app's own transport that ignores the engine's sink and hands back the whole body.
private struct KeepingTransport: Transport {
    let head: HTTPResponse
    let body: Data

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        TransportResponse(head: head, body: body)
    }
}

@Suite("A transport that keeps the body instead of streaming it meets the same rules", .timeLimit(.minutes(10)))
struct KeptBodyTests {
    static func load(_ body: Data, coding: String?, limit: Int = 32 << 20) async throws -> Result<RawResponse, RunwayError> {
        var fields: HTTPFields = [.contentType: "application/octet-stream"]
        if let coding { fields[.contentEncoding] = coding }
        let engine = Engine(transport: KeepingTransport(head: HTTPResponse(status: .ok, headerFields: fields), body: body))
        try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: "http://127.0.0.1:9"]))
        var api = AdHocAPI(path: "/kept")
        api.responseFormat = .raw
        api.maximumResponseSize = limit
        return await engine.perform(api)
    }

    @Test("a coded body is decoded, an oversized one refused, a foreign coding refused, a plain one handed on")
    func keptBodies() async throws {
        let original = Data(DecodingSinkTests.original)
        let gzip = Data(try DecodingSinkTests.coded(DecodingSinkTests.original, .gzip()))
        let decoded = try await Self.load(gzip, coding: "gzip").get()
        #expect(decoded.body == original)
        #expect(decoded.response.headerFields[.contentEncoding] == nil)
        #expect(try await Self.load(original, coding: nil).get().body == original)
        let tooLarge = try await Self.load(original, coding: nil, limit: 1000)
        #expect(tooLarge.error == .invalidResponse(reason: "the body is larger than allowed (1000 bytes)"))
        let foreign = try await Self.load(original, coding: "br")
        #expect(foreign.error == RunwayError(.unofferedCoding("br")))
    }
}
