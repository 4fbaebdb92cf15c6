/// Why an incoming URL was refused before any handler saw it.
public enum LinkError: Error, Sendable, Hashable {
    /// Longer than ``LinkLimits/maximumLength`` bytes.
    case tooLong(length: Int, limit: Int)
    /// A raw byte that may not appear in a URL (space, control, non-ASCII), at this offset.
    case invalidCharacter(offset: Int)
    /// Not `scheme://authority…`, or a part out of place.
    case malformed(reason: String)
    /// A scheme none of the declarations names.
    case undeclaredScheme(String)
    /// `%` not followed by two hex digits.
    case malformedPercentEncoding(component: String)
    /// Percent-decoding gave bytes that are not UTF-8 (overlong forms such as `%C0%AF` included).
    case invalidUTF8(component: String)
    /// Percent-decoding gave a control character (`%00`, `%0A`, …).
    case controlCharacter(component: String)
    /// A query key appears twice and the limits say to refuse that.
    case duplicateQueryKey(String)
}

extension LinkError: CustomStringConvertible {
    /// A sentence a person reads: what was wrong with the URL.
    public var description: String {
        switch self {
        case .tooLong(let length, let limit): return "the URL is \(length) bytes long; at most \(limit) are accepted"
        case .invalidCharacter(let offset):
            return "the URL holds a character that must be percent-encoded, at byte \(offset)"
        case .malformed(let reason): return "the URL is malformed: \(reason)"
        case .undeclaredScheme(let scheme): return "no handler is declared for the scheme \"\(scheme)\""
        case .malformedPercentEncoding(let component):
            return "the \(component) has a % that is not followed by two hex digits"
        case .invalidUTF8(let component): return "the \(component) does not decode to valid UTF-8"
        case .controlCharacter(let component): return "the \(component) decodes to a control character"
        case .duplicateQueryKey(let key): return "the query names \"\(key)\" more than once"
        }
    }
}
