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
