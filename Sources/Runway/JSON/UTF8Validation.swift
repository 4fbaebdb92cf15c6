/// UTF-8 validation by the Unicode standard's table of well-formed byte sequences (Table 3-7):
/// no overlong forms, no surrogates, nothing past U+10FFFF.
///
/// `String(validating:as:)` does the same, but it needs iOS 18 / macOS 15 and, being generic and
/// not inlinable, looks up generic metadata on every call; `String(bytes:encoding:)` is slow and
/// may drop a leading U+FEFF.
enum UTF8Validation {
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        while let lead = iterator.next() {
            if lead < 0x80 { continue }  // ASCII, the common case, costs one comparison
            let continuation: Int
            var range: ClosedRange<UInt8> = 0x80...0xBF  // what the second byte may be
            switch lead {
            case 0xC2...0xDF: continuation = 1
            case 0xE0: continuation = 2; range = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
            case 0xED: continuation = 2; range = 0x80...0x9F
            case 0xF0: continuation = 3; range = 0x90...0xBF
            case 0xF1...0xF3: continuation = 3
            case 0xF4: continuation = 3; range = 0x80...0x8F
            default: return false
            }
            for position in 0..<continuation {
                guard let byte = iterator.next() else { return false }
                guard (position == 0 ? range : 0x80...0xBF).contains(byte) else { return false }
            }
        }
        return true
    }
}
