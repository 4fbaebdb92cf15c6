import Foundation

extension JSON {
    /// Why a value cannot be written as JSON text.
    public struct EncodingFailure: Error, Sendable, Equatable {
        /// What made the value unencodable, for example a non-finite number.
        public var reason: String
    }

    /// The value as compact JSON text in UTF-8, object members in sorted key order.
    ///
    /// Sorted keys make the bytes stable, which request signing and cache keys rely on.
    ///
    /// - throws: ``EncodingFailure`` when the value holds `NaN` or an infinity, which JSON
    ///   cannot express.
    public func encoded() throws(EncodingFailure) -> Data {
        var output = [UInt8]()
        output.reserveCapacity(64)
        try JSON.write(self, into: &output)
        return Data(output)
    }

    static func write(_ value: JSON, into output: inout [UInt8]) throws(EncodingFailure) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): output.append(contentsOf: String(number).utf8)
        case .bigInteger(let digits):
            guard JSON.isIntegerText(digits) else { throw EncodingFailure(reason: "\(digits) is not an integer") }
            output.append(contentsOf: digits.utf8)
        case .double(let number):
            guard number.isFinite else { throw EncodingFailure(reason: "\(number) is not a JSON number") }
            output.append(contentsOf: format(number).utf8)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                try write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                // The key comes from `members`, so the lookup always succeeds.
                try write(members[key] ?? .null, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, into output: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Shortest round-tripping text of a finite double; whole numbers keep no fraction. (Through
    /// `Int64`, not `Int`: where `Int` has 32 bits, as on an arm64_32 Apple Watch, a whole number
    /// past 2³¹ would stop the process.)
    static func format(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }
}

extension JSON: CustomStringConvertible {
    /// Compact JSON text of the value (`"<unencodable>"` for non-finite numbers).
    public var description: String {
        guard let data = try? encoded() else { return "<unencodable>" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension JSON {
    /// Whether `text` is a JSON integer: an optional `-`, then `0` or digits not starting with `0`.
    static func isIntegerText(_ text: String) -> Bool {
        var digits = Substring(text)
        if digits.first == "-" { digits = digits.dropFirst() }
        guard let first = digits.first, first.isASCII, first.isNumber else { return false }
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return first != "0" || digits.count == 1
    }
}
