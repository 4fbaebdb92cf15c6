import Foundation

extension DefaultStringInterpolation {
    /// Interpolates `value` as exactly one path segment: every byte but the unreserved ones
    /// (letters, digits, `-`, `.`, `_`, `~`) percent-encoded, so a `/`, `%`, `?` or `#` in it
    /// stays inside the segment instead of reaching another route.
    ///
    /// Write an ``API/path`` from values this way:
    ///
    /// ```swift
    /// var path: String { "/users/\(pathSegment: name)/posts" }
    /// // name "a/b?c" → /users/a%2Fb%3Fc/posts
    /// ```
    ///
    /// A segment that is `.` or `..` — written so, or interpolated — is refused when the request
    /// is built (``RunwayError/invalidRequest(reason:)``, nothing sent): servers and proxies that
    /// resolve dot segments would route it elsewhere.
    public mutating func appendInterpolation(pathSegment value: some CustomStringConvertible) {
        appendLiteral(PathSegment.encode(value.description))
    }
}

/// One segment of a request path, percent-encoded, and the rule against dot segments.
enum PathSegment {
    /// RFC 3986's unreserved characters: what a segment may carry as it is.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    static func encode(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The first segment of an encoded path (no query) that is `.` or `..`, plainly or
    /// percent-encoded (`%2E`), if any.
    static func dotSegment(in path: Substring) -> Substring? {
        guard path.utf8.contains(UInt8(ascii: ".")) || path.utf8.contains(UInt8(ascii: "%")) else { return nil }
        return path.split(separator: "/", omittingEmptySubsequences: false).first { segment in
            let plain = segment.replacingOccurrences(of: "%2E", with: ".", options: .caseInsensitive)
            return plain == "." || plain == ".."
        }
    }
}
