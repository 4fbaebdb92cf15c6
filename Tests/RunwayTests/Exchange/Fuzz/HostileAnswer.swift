import CompressNIO
import Foundation
import HTTPTypes
import NIOCore
@testable import Runway
import RunwayTestSupport

/// One answer a hostile or broken server might send, made from a seed: a real answer mutated
/// (status, absurd, repeated, huge and malformed header fields, lying framing, bodies cut short,
/// oversized or in a broken content coding), or bytes that are not HTTP at all.
///
/// The same answer is given to the engine two ways: as a ``TransportResponse`` through
/// `StubTransport` (what the engine does with whatever a transport hands it) and as ``wire`` bytes
/// a loopback server writes to a real socket (what each transport's parser lets through).
struct HostileAnswer: CustomStringConvertible {
    var status: Int
    var reason = "OK"
    /// Name and value as the server writes them: not necessarily a token, not necessarily legal.
    var fields: [(name: String, value: String)]
    /// The body as the server means it (before any framing).
    var body: [UInt8]
    /// How the body is framed on the wire.
    var framing = Framing.asFieldsSay
    /// Bytes written instead of an HTTP answer at all.
    var garbage: [UInt8]?
    /// An informational answer written before this one.
    var informational: Int?
    /// After the bytes, keep the connection open and silent instead of closing it.
    var holdOpen = false

    enum Framing {
        /// `Content-Length` (or none) as the fields say; the body written as it is.
        case asFieldsSay
        /// Chunked, in chunks of this size, possibly with a broken chunk size.
        case chunked(size: Int, brokenSize: String?)
    }

    /// Whether URLSession on Linux traps on this answer before Runway sees it: its header
    /// callback converts libcurl's content length, a `Double`, to `Int64` unchecked, and a
    /// `Content-Length` from 2⁶³ − 512 up rounds to 2⁶³, which does not fit
    /// (swift-corelibs-foundation, `_EasyHandle.didReceive(headerData:size:nmemb:contentLength:)`).
    var trapsURLSessionOnLinux: Bool {
        guard garbage == nil else { return false }
        return fields.contains { field in
            field.name.lowercased() == "content-length"
                && (field.value.split(separator: ",").contains { Int64($0.trimmingCharacters(in: .whitespaces)).map { $0 >= Int64.max - 511 } ?? false })
        }
    }

    var description: String {
        if let garbage { return "garbage (\(garbage.count) bytes)" }
        let shown = fields.prefix(8).map { "\($0.name): \($0.value.prefix(60))" }.joined(separator: " | ")
        return "\(status) [\(shown)\(fields.count > 8 ? " | …\(fields.count - 8) more" : "")] body \(body.count) B \(framing)"
    }

    /// The most header bytes an answer carries: past every transport's own limit (libcurl
    /// refuses 300 KB, SwiftNIO's parser far less), so the refusal is fuzzed too, but no more —
    /// a field repeated 200 times, then again, would otherwise make gigabytes that no transport
    /// could hand over, and fill the fuzzer's memory, not Runway's.
    static let headLimit = 320 * 1024

    /// Drops the fields past ``headLimit``.
    mutating func boundHead() {
        var total = 0
        var kept = 0
        for field in fields {
            total += field.name.utf8.count + field.value.utf8.count + 4
            if total > Self.headLimit { break }
            kept += 1
        }
        fields.removeLast(fields.count - kept)
    }

    /// The answer as a transport would hand it to the engine: fields whose names HTTP allows
    /// (a transport's parser drops or refuses the others), the body whole.
    var transportResponse: TransportResponse {
        var head = HTTPFields()
        for field in fields {
            guard let name = HTTPField.Name(field.name) else { continue }
            head.append(HTTPField(name: name, value: field.value))
        }
        let code = (100...999).contains(status) ? status : 500
        return TransportResponse(head: HTTPResponse(status: .init(code: code), headerFields: head), body: Data(body))
    }

    /// The bytes a server writes for this answer.
    var wire: [UInt8] {
        if let garbage { return garbage }
        var out: [UInt8] = []
        if let informational { out += Array("HTTP/1.1 \(informational) Early\r\nLink: </a.css>\r\n\r\n".utf8) }
        out += Array("HTTP/1.1 \(status) \(reason)\r\n".utf8)
        for field in fields { out += Array("\(field.name): \(field.value)\r\n".utf8) }
        switch framing {
        case .asFieldsSay:
            out += Array("\r\n".utf8)
            out += body
        case .chunked(let size, let broken):
            out += Array("Transfer-Encoding: chunked\r\n\r\n".utf8)
            var offset = 0
            while offset < body.count {
                let chunk = body[offset..<min(offset + max(size, 1), body.count)]
                out += Array("\(broken ?? String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
                offset += chunk.count
            }
            out += Array("0\r\n\r\n".utf8)
        }
        return out
    }
}

/// Makes ``HostileAnswer``s: the same seed and index give the same answer on every run.
enum HostileAnswers {
    /// The body of a real answer: the demo's listing envelope.
    static let listing: [UInt8] = Array(
        #"{"code":0,"data":{"items":[{"id":1,"title":"One"},{"id":2,"title":"Two"}],"next":null}}"#.utf8)

    static let gzipped: [UInt8] = {
        var buffer = ByteBuffer(bytes: listing)
        return (try? buffer.compress(with: .gzip())).map { Array($0.readableBytesView) } ?? []
    }()

    static let deflated: [UInt8] = {
        var buffer = ByteBuffer(bytes: listing)
        return (try? buffer.compress(with: .zlib())).map { Array($0.readableBytesView) } ?? []
    }()

    /// Real answers, as a server sends them, to start mutating from.
    static func template(_ number: Int) -> HostileAnswer {
        let json = ("Content-Type", "application/json")
        let length = { (body: [UInt8]) in ("Content-Length", String(body.count)) }
        switch number % 12 {
        case 0: return HostileAnswer(status: 200, fields: [json, length(listing)], body: listing)
        case 1: return HostileAnswer(status: 200, fields: [json], body: listing, framing: .chunked(size: 16, brokenSize: nil))
        case 2:
            return HostileAnswer(status: 200, fields: [json, ("Content-Encoding", "gzip"), length(gzipped)], body: gzipped)
        case 3:
            return HostileAnswer(status: 200, fields: [json, ("Content-Encoding", "deflate"), length(deflated)], body: deflated)
        case 4:
            let body = Array(#"{"code":401,"reason":"stale_timestamp"}"#.utf8)
            return HostileAnswer(
                status: 401, reason: "Unauthorized",
                fields: [
                    json, length(body),
                    ("WWW-Authenticate", #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time="1800000000""#),
                ], body: body)
        case 5:
            return HostileAnswer(
                status: 401, reason: "Unauthorized",
                fields: [("WWW-Authenticate", #"Bearer realm="runway", error="invalid_token""#), ("Content-Length", "0")], body: [])
        case 6: return HostileAnswer(status: 302, reason: "Found", fields: [("Location", "/next"), ("Content-Length", "0")], body: [])
        case 7:
            return HostileAnswer(
                status: 503, reason: "Unavailable", fields: [("Retry-After", "1"), ("Content-Length", "4")], body: Array("busy".utf8))
        case 8:
            return HostileAnswer(
                status: 429, reason: "Too Many", fields: [("Retry-After", "Wed, 21 Oct 2037 07:28:00 GMT"), ("Content-Length", "0")],
                body: [])
        case 9:
            return HostileAnswer(
                status: 200,
                fields: [
                    json, ("Set-Cookie", "session=abc; Path=/; HttpOnly"),
                    ("Set-Cookie", "theme=dark; Expires=Wed, 21 Oct 2037 07:28:00 GMT"), length(listing),
                    ("Cache-Control", "max-age=60"), ("ETag", #""v1""#),
                ], body: listing)
        case 10: return HostileAnswer(status: 304, reason: "Not Modified", fields: [("ETag", #""v1""#)], body: [])
        default: return HostileAnswer(status: 204, reason: "No Content", fields: [], body: [])
        }
    }

    /// Values that have broken parsers, per field.
    static let absurd: [String: [String]] = [
        "Content-Length": [
            "-1", "99999999999999999999999999", "9223372036854775807", "12, 12", "12, 13", "0x10", "", " 5 ", "1e3",
            "4294967296", "+7",
        ],
        "Content-Encoding": [
            "gzip", "gzip, gzip", "deflate, gzip", "br", "zstd", "identity", "x-unknown", "GZIP",
            String(repeating: "gzip, ", count: 40) + "gzip", "compress",
        ],
        "Transfer-Encoding": ["chunked", "gzip, chunked", "chunked, chunked", "identity", "chunked, gzip", "x"],
        "Retry-After": [
            "-1", "99999999999999999999", "9223372036854775807", "Wed, 21 Oct 2037 07:28:00 GMT", "Sun Nov  6 08:49:37 1994",
            "Sunday, 06-Nov-94 08:49:37 GMT", "never", "1.5", "",
        ],
        "WWW-Authenticate": [
            #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time="9223372036854775807""#,
            #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time="-9223372036854775808""#,
            #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time="1e300""#,
            #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time=""#, #"Basic realm="unterminated"#,
            "Bearer", "Digest nonce=, realm", String(repeating: "Bearer a=b, ", count: 500),
        ],
        "Set-Cookie": [
            "a=" + String(repeating: "x", count: 5000), "b=1; Domain=.com", "c=1; Expires=garbage", "d=1; Max-Age=-1",
            "e=1; Max-Age=99999999999999999999", "=novalue", "__Host-f=1; Domain=example.com", "g=1; Secure", ";;;;",
            "h=1; Path=" + String(repeating: "/a", count: 2000),
        ],
        "Location": [
            "//evil.example/x", "http://[::1", "ftp://example.com/", "", String(repeating: "/a", count: 5000), "../../../x",
            "http://127.0.0.1:1/x", "https://user:pass@127.0.0.1/", "/%ZZ", "javascript:alert(1)",
        ],
        "Cache-Control": [
            "max-age=-1", "max-age=99999999999999999999", "no-store", "no-cache, max-age=5", "max-age=", "private, s-maxage=1",
            String(repeating: "a, ", count: 2000),
        ],
        "Content-Type": ["application/json; charset=utf-16", "text/html", "", "application/json; charset=x", "*/*"],
        "Date": ["Wed, 21 Oct 2037 07:28:00 GMT", "garbage", "", "Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 99999 23:59:59 GMT"],
        "Age": ["-1", "99999999999999999999", "x"],
        "Content-Range": ["bytes 0-10/5", "bytes */99999999999999999999", "bytes -1--2/3"],
    ]

    static let interestingStatuses = [
        100, 101, 103, 199, 200, 201, 204, 205, 206, 299, 301, 302, 303, 304, 305, 307, 308, 399, 400, 401, 403, 404, 407,
        408, 413, 429, 451, 499, 500, 502, 503, 504, 599, 600, 999,
    ]

    /// The answer for `index` of a run seeded with `seed`.
    static func make(seed: UInt64, index: Int) -> HostileAnswer {
        var random = SplitMix64(seed: seed &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
        if random.below(20) == 0 { return randomAnswer(&random) }
        var answer = template(random.below(12))
        for _ in 0...random.below(4) { mutate(&answer, &random) }
        answer.boundHead()
        return answer
    }

    /// An answer made of random bytes: sometimes not HTTP at all, sometimes a status line over
    /// random fields.
    static func randomAnswer(_ random: inout SplitMix64) -> HostileAnswer {
        let bytes = (0..<random.below(600)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if random.below(2) == 0 {
            return HostileAnswer(status: 500, fields: [], body: [], garbage: bytes)
        }
        var fields: [(String, String)] = []
        for _ in 0..<random.below(10) {
            let name = String(decoding: (0..<(1 + random.below(12))).map { _ in UInt8(33 + random.below(94)) }, as: UTF8.self)
            let value = String(decoding: (0..<random.below(40)).map { _ in UInt8(32 + random.below(95)) }, as: UTF8.self)
            fields.append((name, value))
        }
        return HostileAnswer(status: random.pick(interestingStatuses), fields: fields, body: bytes)
    }

    static func mutate(_ answer: inout HostileAnswer, _ random: inout SplitMix64) {
        switch random.below(12) {
        case 0:
            answer.status = random.pick(interestingStatuses)
        case 1, 2, 3:
            // A field from the hostile list, added or in place of the real one.
            let name = random.pick(Array(absurd.keys).sorted())
            let value = random.pick(absurd[name] ?? [""])
            if random.below(2) == 0 { answer.fields.removeAll { $0.name.lowercased() == name.lowercased() } }
            answer.fields.append((random.below(4) == 0 ? name.uppercased() : name, value))
        case 4:
            // A field repeated many times.
            guard let field = answer.fields.isEmpty ? nil : random.pick(answer.fields) else { return }
            answer.fields += Array(repeating: field, count: 2 + random.below(200))
        case 5:
            // One huge value.
            answer.fields.append(("X-Huge", String(repeating: "h", count: 1 + random.below(64 * 1024))))
        case 6:
            // A malformed field line: no colon, a name HTTP forbids, bytes from the top half, NUL.
            let malformed = ["No-Colon-Here", "Bad Name", "Ünïcödé", "X-Null\u{0}Name", "", ":", "X-Tab\tName"]
            answer.fields.append((random.pick(malformed), random.pick(["v", "\u{0}", "é", " ", "a\u{7F}b"])))
        case 7:
            // The body cut short.
            answer.body = Array(answer.body.prefix(random.below(answer.body.count + 1)))
        case 8:
            // The body grown with random bytes, sometimes past any sensible cap.
            let extra = random.below(8) == 0 ? 200_000 + random.below(200_000) : random.below(2000)
            answer.body += (0..<extra).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 9:
            // A coding's header followed by garbage.
            let header: [UInt8] = random.below(2) == 0 ? [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0x03] : [0x78, 0x9C]
            answer.body = header + (0..<random.below(3000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            answer.fields.append(("Content-Encoding", header.count == 2 ? "deflate" : "gzip"))
        case 10:
            // Chunked framing, sometimes with a chunk size that lies or cannot be read.
            let broken: String? = random.below(3) == 0 ? random.pick(["ffffffffffffffffffff", "-1", "zz", "", "1;ext=\"", "7fffffff"]) : nil
            answer.fields.removeAll { $0.name.lowercased() == "content-length" }
            answer.framing = .chunked(size: 1 + random.below(64), brokenSize: broken)
        default:
            // An informational answer first, or a connection held open after the bytes.
            if random.below(2) == 0 { answer.informational = random.pick([100, 102, 103]) } else { answer.holdOpen = random.below(8) == 0 }
        }
    }
}
