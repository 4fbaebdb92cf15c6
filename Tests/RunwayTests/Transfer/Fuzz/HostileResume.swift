import Foundation
import RunwayTestSupport

/// What a hostile or broken server answers when a download asks for the rest of a file
/// (`Range: bytes=N-`, `If-Range: "v1"`), made from a seed: the honest 206 mutated — another
/// `ETag` over the changed file's bytes, a range that starts elsewhere, ends elsewhere or cannot
/// be read, a `Content-Length` that disagrees with the range, bytes past the range, a body cut
/// short, chunked or held open — or another answer altogether (the whole file, the changed
/// file whole, 416, 412, 204, 304, 5xx).
///
/// Every body is made of the file's own bytes — version 1's, or version 2's where the answer
/// says it is version 2 (or lies about its range or its length) — never random ones: a server
/// that lies about its bytes under the right validator is beyond any client's checking, but a
/// server whose headers disagree with each other is not. So a download that ends well holds
/// exactly version 1, or exactly a whole answer the server sent; anything else is two answers
/// spliced together.
enum HostileResumes {
    static let size = 4096
    /// Version 1 of the file: seeded bytes, with no period a shifted range could hide behind.
    static let v1: [UInt8] = {
        var random = SplitMix64(seed: 0x7631)
        return (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }()
    /// Version 2, the file changed on the server: the same size, every byte different.
    static let v2: [UInt8] = v1.map { $0 ^ 0xA5 }
    static let etag1 = #""v1""#
    static let etag2 = #""v2""#

    /// An answer and, when it is a whole file (a 200 or a 204), the file it makes.
    struct Planned {
        var answer: HostileAnswer
        var whole: [UInt8]?
    }

    /// The first answer of input `index`'s download: version 1 cut short after a seeded number
    /// of bytes, leaving a partial file and the note to resume it.
    static func cut(seed: UInt64, index: Int) -> HostileAnswer {
        var random = generator(seed: seed, index: index, salt: 1)
        let kept = 1 + random.below(size - 1)
        return HostileAnswer(
            status: 200, fields: [("ETag", etag1), ("Content-Length", "\(size)")], body: Array(v1.prefix(kept)))
    }

    /// What an honest server answers: the rest of version 1 for a range under its validator,
    /// 416 for a range past its end, the whole file otherwise.
    static func honest(from: Int?, ifRange: String?) -> HostileAnswer {
        guard let from, ifRange == etag1 else { return whole(v1, etag: etag1) }
        guard from < size else { return notSatisfiable }
        return partial(v1, from: from)
    }

    /// 416: no byte of the file from there.
    static let notSatisfiable = HostileAnswer(
        status: 416, reason: "Range Not Satisfiable", fields: [("Content-Range", "bytes */\(size)"), ("Content-Length", "0")], body: [])

    /// The hostile answer of input `index` to a request for the rest from byte `from`.
    static func make(seed: UInt64, index: Int, from: Int?) -> Planned {
        var random = generator(seed: seed, index: index, salt: 2)
        let from = min(from ?? 0, size - 1)
        switch random.below(10) {
        case 0:
            // The range ignored: the file whole, or the changed file whole.
            return random.below(2) == 0 ? Planned(answer: whole(v1, etag: etag1), whole: v1) : Planned(answer: whole(v2, etag: etag2), whole: v2)
        case 1:
            // Another answer altogether.
            switch random.below(7) {
            case 0: return Planned(answer: notSatisfiable)
            case 1: return Planned(answer: HostileAnswer(status: 412, reason: "Precondition Failed", fields: [("Content-Length", "0")], body: []))
            case 2: return Planned(answer: HostileAnswer(status: 204, reason: "No Content", fields: [], body: []), whole: [])
            case 3: return Planned(answer: HostileAnswer(status: 304, reason: "Not Modified", fields: [("ETag", etag1)], body: []))
            case 4:
                return Planned(
                    answer: HostileAnswer(status: 503, reason: "Unavailable", fields: [("Retry-After", "0"), ("Content-Length", "4")], body: Array("busy".utf8)))
            case 5: return Planned(answer: HostileAnswer(status: 500, reason: "Error", fields: [("Content-Length", "0")], body: []))
            default:
                // A 206 to a request that asked for no range, or for another.
                return Planned(answer: partial(v1, from: 0))
            }
        default:
            var answer = partial(v1, from: from)
            var body = Body(version: v1, start: from)
            for _ in 0...random.below(3) { mutate(&answer, body: &body, asked: from, &random) }
            answer.boundHead()
            return Planned(answer: answer)
        }
    }

    /// Which file a 206's body is cut from, and where in it the body starts: what a mutation
    /// keeps the answer's `Content-Range` honest about.
    struct Body {
        var version: [UInt8]
        var start: Int
    }

    /// One way a 206 for the rest from `asked` goes wrong.
    static func mutate(_ answer: inout HostileAnswer, body: inout Body, asked from: Int, _ random: inout SplitMix64) {
        switch random.below(9) {
        case 0:
            // The file changed behind a proxy that ignores If-Range: its bytes, under its ETag.
            body = Body(version: v2, start: from)
            answer = partial(v2, from: from, etag: etag2)
        case 1:
            // A validator that is not the one asked with, over version 1's bytes.
            let etag = random.pick([#"W/"v1""#, "v1", #""v1", "v2""#, #""V1""#, #""v1 ""#, ""])
            answer.fields.removeAll { $0.name == "ETag" }
            if !etag.isEmpty || random.below(2) == 0 { answer.fields.append(("ETag", etag)) }
        case 2:
            // A range that starts elsewhere, honest about its bytes from there.
            let starts = [from - 1, from + 1, 0, from + 256, from / 2].filter { $0 >= 0 && $0 < size && $0 != from }
            guard !starts.isEmpty else { return }
            body.start = random.pick(starts)
            answer.body = Array(body.version[body.start...])
            set("Content-Range", "bytes \(body.start)-\(size - 1)/\(size)", in: &answer)
            set("Content-Length", "\(answer.body.count)", in: &answer)
        case 3:
            // A range that ends before the file does, or a total that is not the file's. (A
            // total nobody knows only with the range to the file's end: the server's word that
            // the file ends there.)
            let start = body.start
            let shorter = start + random.below(size - start)
            let (end, total) = random.pick([
                (shorter, "\(size)"), (size - 1, "*"), (shorter, "\(size + 1 + random.below(1000))"), (shorter, "\(shorter)"),
                (size - 1, "9223372036854775807"),
            ])
            set("Content-Range", "bytes \(start)-\(end)/\(total)", in: &answer)
            if random.below(2) == 0 {
                // The body and its length agree with the range; otherwise the whole rest comes.
                answer.body = Array(body.version[start...end])
                set("Content-Length", "\(answer.body.count)", in: &answer)
            }
        case 4:
            // A range field no parser should read, or two of them.
            let shown = random.pick([
                "bytes=\(from)-\(size - 1)/\(size)", "bytes \(from)-/\(size)", "items \(from)-\(size - 1)/\(size)", "",
                "bytes \(size - 1)-\(from)/\(size)", "bytes -1--2/3", "bytes \(from)-\(size - 1)/", "bytes \(from)-99999999999999999999/*",
                "bytes  \(from) - \(size - 1) / \(size)",
            ])
            if random.below(3) == 0 {
                answer.fields.append(("Content-Range", shown))
            } else {
                set("Content-Range", shown, in: &answer)
            }
        case 5:
            // A Content-Length that disagrees with the range: shorter, longer, absurd, two, none.
            let count = answer.body.count
            let value = random.pick([
                "\(max(count - 1 - random.below(100), 0))", "\(count + 1 + random.below(100))", "\(count), \(count)", "-1",
                "99999999999999999999", "9223372036854775807", "9223372036854775000", "0x10", "",
            ])
            if random.below(6) == 0 {
                answer.fields.removeAll { $0.name == "Content-Length" }
            } else {
                set("Content-Length", value, in: &answer)
            }
        case 6:
            // Bytes past the range's end, the changed file's, counted in the length, sometimes
            // under a total nobody knows.
            answer.body = Array(body.version[body.start...]) + Array(v2.prefix(1 + random.below(500)))
            set("Content-Length", "\(answer.body.count)", in: &answer)
            if random.below(2) == 0 { set("Content-Range", "bytes \(body.start)-\(size - 1)/*", in: &answer) }
        case 7:
            // The body cut short, its length still promising the rest.
            guard !answer.body.isEmpty else { return }
            answer.body = Array(answer.body.prefix(random.below(answer.body.count)))
            answer.holdOpen = random.below(8) == 0
        default:
            // Chunked, sometimes with a chunk size that cannot be read.
            answer.fields.removeAll { $0.name == "Content-Length" }
            let broken: String? = random.below(4) == 0 ? random.pick(["ffffffffffffffffffff", "zz", "-1"]) : nil
            answer.framing = .chunked(size: 1 + random.below(900), brokenSize: broken)
        }
    }

    /// `bytes` from `from` to the end as a 206, under `etag`.
    static func partial(_ bytes: [UInt8], from: Int, etag: String = etag1) -> HostileAnswer {
        HostileAnswer(
            status: 206, reason: "Partial Content",
            fields: [
                ("ETag", etag), ("Content-Range", "bytes \(from)-\(bytes.count - 1)/\(bytes.count)"),
                ("Content-Length", "\(bytes.count - from)"),
            ], body: Array(bytes[from...]))
    }

    /// `bytes` whole as a 200, under `etag`.
    static func whole(_ bytes: [UInt8], etag: String) -> HostileAnswer {
        HostileAnswer(status: 200, fields: [("ETag", etag), ("Content-Length", "\(bytes.count)")], body: bytes)
    }

    static func set(_ name: String, _ value: String, in answer: inout HostileAnswer) {
        answer.fields.removeAll { $0.name == name }
        answer.fields.append((name, value))
    }

    static func generator(seed: UInt64, index: Int, salt: UInt64) -> SplitMix64 {
        SplitMix64(seed: seed &+ salt &* 0xD1B5_4A32_D192_ED03 &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The range a request's head asks for (`Range: bytes=N-`) and its `If-Range`.
    static func asked(in head: String) -> (from: Int?, ifRange: String?) {
        var from: Int?
        var ifRange: String?
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "range", value.hasPrefix("bytes="), value.hasSuffix("-") {
                from = Int(value.dropFirst("bytes=".count).dropLast())
            } else if name == "if-range" {
                ifRange = value
            }
        }
        return (from, ifRange)
    }
}
