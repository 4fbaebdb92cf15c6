public import HTTPTypes

extension HTTPFields {
    /// The fields as HTTP/1.1 header lines, in order, each field its own line — except
    /// `Cookie`. `HTTPFields` keeps each cookie pair as a field of its own (setting
    /// `fields[.cookie] = "a=1; b=2"` makes two, as HTTP/2 may send them, RFC 9113 §8.2.3), but
    /// HTTP/1.1 allows one `Cookie` line only (RFC 6265 §5.4): two lines reach a server as
    /// `a=1, b=2`, one cookie named `a`. So they are joined with `"; "` into the first one's place.
    ///
    /// A transport that writes header lines itself (or hands them to a library that does) sends
    /// these.
    public var headerLines: [(name: String, value: String)] {
        var lines: [(name: String, value: String)] = []
        lines.reserveCapacity(count)
        forEachHeaderLine { lines.append(($0, $1)) }
        return lines
    }

    /// Calls `body` with each of ``headerLines`` in order, without making the array: a transport
    /// that copies the lines into its own type makes no allocation of its own for them.
    public func forEachHeaderLine(_ body: (_ name: String, _ value: String) throws -> Void) rethrows {
        // The cookie line's value: the one pair as it is, several joined.
        var cookie = ""
        var cookies = 0
        for field in self where field.name == .cookie {
            cookie = cookies == 0 ? field.value : cookie + "; " + field.value
            cookies += 1
        }
        var cookieSent = false
        for field in self {
            guard field.name == .cookie else {
                try body(field.name.rawName, field.value)
                continue
            }
            if cookieSent { continue }
            cookieSent = true
            try body(field.name.rawName, cookie)
        }
    }
}
