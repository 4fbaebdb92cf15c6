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
        var cookieLine: Int?
        for field in self {
            if field.name == .cookie {
                if let cookieLine {
                    lines[cookieLine].value += "; " + field.value
                    continue
                }
                cookieLine = lines.count
            }
            lines.append((field.name.rawName, field.value))
        }
        return lines
    }
}
