import Foundation

/// Percent-decoding done once and strictly: `%` needs two hex digits, the result must be UTF-8
/// (which refuses overlong forms like `%C0%AF`), and decoded control characters are refused.
/// `+` is a plus sign (RFC 3986), not a space.
enum PercentDecoding {
    static func decode(_ text: Substring, component: String) throws(LinkError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw .malformedPercentEncoding(component: component)
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        guard let decoded = validatedString(bytes) else { throw .invalidUTF8(component: component) }
        if decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) {
            throw .controlCharacter(component: component)
        }
        return decoded
    }

    /// The bytes as a string when they are valid UTF-8 (overlong forms refused), else `nil`.
    static func validatedString(_ bytes: [UInt8]) -> String? {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
