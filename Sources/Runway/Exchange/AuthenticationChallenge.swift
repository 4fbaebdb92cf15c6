public import HTTPTypes

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme and its
/// parameters, which is how a server says why it refused a request (`error="invalid_token"`,
/// `error="request_time_skewed"`).
public struct AuthenticationChallenge: Sendable, Hashable {
    /// The scheme as sent (`Bearer`, `Basic`, `RUNWAY-HMAC-SHA256`); compare it case-insensitively.
    public var scheme: String
    /// The parameters, by lowercase name, with quotes and escapes removed.
    public var parameters: [String: String]

    /// Creates a challenge.
    public init(scheme: String, parameters: [String: String] = [:]) {
        self.scheme = scheme
        self.parameters = parameters
    }

    /// Every challenge of `response`'s `WWW-Authenticate` fields, in order; a field that cannot
    /// be read is skipped.
    public static func all(in response: HTTPResponse) -> [AuthenticationChallenge] {
        response.headerFields[values: .wwwAuthenticate].flatMap(parse)
    }

    /// The challenges of one field value: `Scheme name=value, name="quoted", Other …`. A
    /// `token68` (Basic's credentials form) is kept under the empty name.
    static func parse(_ value: String) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        var scanner = Scanner(Array(value.utf8))
        while true {
            _ = scanner.skipSeparators()
            guard let scheme = scanner.token() else { break }
            var challenge = AuthenticationChallenge(scheme: scheme)
            var first = true
            while true {
                let mark = scanner.position
                let crossedComma = scanner.skipSeparators()
                guard let name = scanner.token() else { break }
                scanner.skipSpaces()
                if scanner.take(UInt8(ascii: "=")) {
                    scanner.skipSpaces()
                    if let text = scanner.quoted() ?? scanner.token() {
                        challenge.parameters[name.lowercased()] = text
                    } else {
                        // `abc==`: a token68 with its padding.
                        var padded = name + "="
                        while scanner.take(UInt8(ascii: "=")) { padded += "=" }
                        challenge.parameters[""] = padded
                    }
                } else if first, !crossedComma {
                    challenge.parameters[""] = name
                } else {
                    // The next challenge's scheme.
                    scanner.position = mark
                    break
                }
                first = false
            }
            challenges.append(challenge)
        }
        return challenges
    }

    /// Reads bytes of one field value.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }
        var peek: UInt8? { isAtEnd ? nil : bytes[position] }

        mutating func skipSpaces() {
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { position += 1 }
        }

        /// Skips spaces and commas; whether a comma was among them.
        mutating func skipSeparators() -> Bool {
            var comma = false
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: ",") {
                comma = comma || byte == UInt8(ascii: ",")
                position += 1
            }
            return comma
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// A `token` (RFC 9110 §5.6.2), or a `token68` without its `=` padding.
        mutating func token() -> String? {
            let start = position
            while let byte = peek, Self.isTokenByte(byte) { position += 1 }
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }

        /// A `quoted-string`, without its quotes and with `\` escapes undone.
        mutating func quoted() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var text: [UInt8] = []
            while let byte = peek {
                position += 1
                if byte == UInt8(ascii: "\"") { return String(decoding: text, as: UTF8.self) }
                if byte == UInt8(ascii: "\\"), let escaped = peek {
                    position += 1
                    text.append(escaped)
                } else {
                    text.append(byte)
                }
            }
            return nil
        }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~/".utf8.contains(byte)
            }
        }
    }
}
