/// Writes params as `application/x-www-form-urlencoded` text for a query or a form body.
///
/// The output is stable: keys sorted by their UTF-8 bytes, array elements in their order as
/// repeated keys (`tag=a&tag=b`), everything outside RFC 3986's unreserved set percent-encoded
/// (a space is `%20`, `+` is `%2B`). `null` is an empty value (`key=`). Objects and nested arrays
/// have no form spelling and are refused rather than guessed at.
enum QueryEncoder {
    static func encode(_ params: Parameters) throws(RunwayError) -> String {
        var pairs: [String] = []
        pairs.reserveCapacity(params.count)
        for key in params.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            guard let value = params[key] else { continue }
            let name = percentEncode(key)
            switch value {
            case .array(let elements):
                for element in elements {
                    pairs.append(name + "=" + percentEncode(try text(of: element, key: key)))
                }
            default:
                pairs.append(name + "=" + percentEncode(try text(of: value, key: key)))
            }
        }
        return pairs.joined(separator: "&")
    }

    private static func text(of value: JSON, key: String) throws(RunwayError) -> String {
        switch value {
        case .null: return ""
        case .double(let number) where !number.isFinite:
            throw .paramsUnencodable(reason: "\"\(key)\" is \(number), which has no text form")
        case .array, .object:
            throw .paramsUnencodable(reason: "\"\(key)\" nests a container, which a query cannot express")
        default: return value.scalarText ?? ""
        }
    }

    /// Percent-encodes every byte outside RFC 3986's unreserved characters.
    static func percentEncode(_ text: String) -> String {
        // Most names and values need nothing: handed back as they are, nothing allocated.
        guard !text.utf8.allSatisfy(isUnreserved) else { return text }
        var output = [UInt8]()
        output.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `byte` is one of RFC 3986's unreserved characters.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// The upper-case hex digit of `nibble` (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
