import Foundation

/// A strict RFC 8259 parser from UTF-8 bytes straight into ``JSON``.
///
/// Parsing is the largest client cost per request, so the engine parses once, off the main actor,
/// straight into the value type the manager keeps: no `JSONSerialization` objects to bridge and
/// walk afterwards. Nesting is capped so hostile input cannot exhaust the stack.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 512

    /// Counts a parse may not exceed, checked as it goes: a text past one stops at the first
    /// value beyond the limit, so what refusing it costs is bounded by the limit, not by the text
    /// (a few kilobytes of `[{},{},…]` inflated to megabytes would otherwise build a million
    /// values before anything could count them).
    package struct Limits: Sendable {
        /// The most values in the whole text: every object, array, string, number, `true`,
        /// `false` and `null` counts one (member names do not).
        package var maximumNodes: Int
        /// A member of the top-level object whose value, when an array, may hold at most
        /// `limit` elements (a batch's `events`): the parse stops before the element past it.
        package var arrayMember: (name: String, limit: Int)?

        /// No limit beyond the nesting depth.
        package static let none = Limits(maximumNodes: .max, arrayMember: nil)

        package init(maximumNodes: Int, arrayMember: (name: String, limit: Int)? = nil) {
            self.maximumNodes = maximumNodes
            self.arrayMember = arrayMember
        }
    }

    /// Which of the ``Limits`` a text went past.
    package enum ExceededLimit: Equatable, Sendable {
        /// More values than ``Limits/maximumNodes``.
        case nodes
        /// More elements in ``Limits/arrayMember``'s array than its limit.
        case arrayMember
    }

    /// Why a body is not JSON, with the byte offset where parsing stopped; `exceeded` when the
    /// text stopped at a limit rather than at a syntax error.
    package struct Failure: Error, Equatable {
        package var reason: String
        package var offset: Int
        package var exceeded: ExceededLimit?

        init(reason: String, offset: Int, exceeded: ExceededLimit? = nil) {
            self.reason = reason
            self.offset = offset
            self.exceeded = exceeded
        }
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private var index = 0
    private var depth = 0
    private var nodes = 0
    /// Set while the value of ``Limits/arrayMember`` is being parsed, read by the array that
    /// value opens: how many elements it may hold.
    private var pendingElementLimit: Int?
    /// Members and elements of the containers still open, innermost last. A container is built
    /// at its closing bracket with its exact size: one allocation, instead of a dictionary or an
    /// array regrown as it fills (most of the parser's allocations before).
    private var openMembers: [(key: String, value: JSON)] = []
    private var openElements: [JSON] = []

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
        // Room for typical pages up front, so the stacks are not regrown a step at a time.
        openMembers.reserveCapacity(64)
        openElements.reserveCapacity(64)
    }

    /// Parses one JSON text; white space may surround it, nothing else may follow it. A leading
    /// UTF-8 byte order mark is ignored (RFC 8259 §8.1 allows it; Foundation does the same).
    package static func parse(_ data: Data, limits: Limits = .none) throws(Failure) -> JSON {
        var parser = JSONParser(bytes: [UInt8](data), limits: limits)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw Failure(reason: "unexpected data after the JSON value", offset: parser.index)
        }
        return value
    }

    private func fail(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

    /// The bytes as a string when they are valid UTF-8 (overlong forms, surrogates and values
    /// past U+10FFFF refused), else `nil`. Every byte is kept, a leading U+FEFF included.
    ///
    /// Validated here, then decoded from the contiguous bytes (which then never has to repair
    /// anything). `String(validating:as:)` would do both, but it is generic and not inlinable:
    /// on Linux each call looked up generic metadata at run time, a fifth of the parser's time
    /// on a typical response (seen with `perf`).
    static func validatedString(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            guard UTF8Validation.isValid(buffer) else { return nil }
            return String(decoding: buffer, as: UTF8.self)
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(Failure) -> JSON {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        nodes += 1
        guard nodes <= limits.maximumNodes else {
            throw Failure(reason: "more than \(limits.maximumNodes) values", offset: index, exceeded: .nodes)
        }
        // Taken by this value alone, so an array nested in a value of another type never gets it.
        let elementLimit = pendingElementLimit ?? .max
        pendingElementLimit = nil
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray(elementLimit: elementLimit)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expect(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of input") }
        let matches = word.withUTF8Buffer { expected in
            expected.elementsEqual(bytes[index..<(index + count)])
        }
        guard matches else { throw fail("invalid literal") }
        index += count
    }

    private mutating func enterContainer() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth)") }
    }

    private mutating func parseObject() throws(Failure) -> JSON {
        try enterContainer()
        defer { depth -= 1 }
        index += 1
        let first = openMembers.count
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            if depth == 1, let member = limits.arrayMember, member.name == key { pendingElementLimit = member.limit }
            let value = try parseValue()
            openMembers.append((key, value))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                // In document order, so a repeated name keeps its last value.
                var members = [String: JSON](minimumCapacity: openMembers.count - first)
                for position in first..<openMembers.count {
                    members[openMembers[position].key] = openMembers[position].value
                }
                openMembers.removeSubrange(first...)
                return .object(members)
            }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray(elementLimit: Int) throws(Failure) -> JSON {
        try enterContainer()
        defer { depth -= 1 }
        index += 1
        let first = openElements.count
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        while true {
            skipWhitespace()
            guard openElements.count - first < elementLimit else {
                throw Failure(reason: "more than \(elementLimit) elements", offset: index, exceeded: .arrayMember)
            }
            let element = try parseValue()
            openElements.append(element)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                let elements = Array(openElements[first...])
                openElements.removeSubrange(first...)
                return .array(elements)
            }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = bytes[start..<index]
                index += 1
                guard let text = JSONParser.validatedString(slice) else {
                    throw Failure(reason: "invalid UTF-8 in string", offset: start)
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        var scalars = [UInt8](bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = JSONParser.validatedString(scalars[...]) else {
                    throw Failure(reason: "invalid UTF-8 in string", offset: start)
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    UTF8.encode(scalar) { scalars.append($0) }
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                scalars.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unexpected end of input") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800...0xDBFF).contains(first) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("unpaired surrogate") }
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw fail("unpaired surrogate") }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail("invalid \\u escape") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw fail("unpaired surrogate") }
        return scalar
    }

    private mutating func parseNumber() throws(Failure) -> JSON {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail("unexpected end of input") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        } else {
            throw fail("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw fail("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw fail("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger {
            // Out of Int's range, the digits are kept exactly rather than rounded through Double.
            return Int(text).map(JSON.int) ?? .bigInteger(text)
        }
        guard let value = Double(text), value.isFinite else {
            throw Failure(reason: "number out of range", offset: start)
        }
        return .double(value)
    }
}

extension JSON {
    /// Parses UTF-8 JSON text (RFC 8259, strict) into a value.
    ///
    /// - throws: ``RunwayError/invalidResponse(reason:)`` naming what is wrong and where.
    public init(parsing data: Data) throws(RunwayError) {
        do {
            self = try JSONParser.parse(data)
        } catch {
            throw .invalidResponse(reason: "the body is not JSON: \(error.reason) at byte \(error.offset)")
        }
    }
}
