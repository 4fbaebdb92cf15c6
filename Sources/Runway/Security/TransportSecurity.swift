/// Runway's plain-HTTP rule, the App Transport Security idea: HTTPS everywhere, except loopback
/// (development servers, tests) and services that opt in with ``Service/Connection/allowsInsecureHTTP``.
enum TransportSecurity {
    /// Whether `host` names this machine: `localhost`, `127.0.0.0/8` or `::1`.
    ///
    /// Plain string work, no Foundation: every request asks this, the first one at launch.
    static func isLoopback(host: String) -> Bool {
        var bare = Substring(host.lowercased())
        while let first = bare.first, first == "[" || first == "]" { bare = bare.dropFirst() }
        while let last = bare.last, last == "[" || last == "]" { bare = bare.dropLast() }
        if bare == "localhost" || bare.hasSuffix(".localhost") || bare == "::1" || bare == "0:0:0:0:0:0:0:1" {
            return true
        }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) else { return false }
        return octets[0] == "127"
    }
}
