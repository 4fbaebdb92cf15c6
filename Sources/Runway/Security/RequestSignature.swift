import Crypto
import Foundation
public import HTTPTypes

/// Runway's request signature: the canonical request both the app and the server compute, and the
/// header fields that carry it.
///
/// The canonical request (version 2) is these lines, joined by `\n`:
///
/// ```
/// RUNWAY-HMAC-SHA256-2
/// <method>                      GET
/// <scheme>                      https
/// <authority>                   api.example.com   (lowercase; :80 / :443 dropped for http / https)
/// <path>                        /listings/esf     (as sent, without the query)
/// <canonical query>             see below
/// <signed header names>         content-type;x-app-build   (lowercase, sorted, ';'-joined)
/// <signed header fields>        one `name:value` line per signed name; repeated fields joined
///                               by `,`; an absent field signs as `name:`
/// <body SHA-256>                lowercase hex; the hash of no bytes for an empty body
/// <timestamp>                   Unix seconds
/// <nonce>                       unique per request
/// <key id>                      which key signed
/// ```
///
/// The canonical query takes each `name=value` pair as sent, percent-decodes name and value to
/// bytes, and re-encodes every byte outside RFC 3986's unreserved set as `%XX` (uppercase); a
/// literal `+` stays `+`, so `+` and `%2B` sign differently, as servers read them differently.
/// Pairs are sorted by name with a stable sort: repeated names keep the order they were sent
/// in, because servers read the first (or the last) and `role=user&role=admin` must not sign
/// like `role=admin&role=user`. A `%` not followed by two hex digits, or a byte that must be
/// percent-encoded but is not (space, control, non-ASCII), makes the request unsignable: the
/// signer refuses it and the verifier answers `malformed_request`.
///
/// `content-type` is always among the signed header fields; a signer may add more (an
/// `Authorization` it wants bound to the request, an app-build field). The scheme and the
/// authority bind the signature to the host it was made for: a request signed for one host is
/// refused by another that shares the key id.
///
/// The signature is the lowercase hex HMAC-SHA256 of that text with the key's secret. The server
/// looks the key up by its id (many callers, one key each), recomputes from what arrived, and
/// compares in constant time.
public enum RequestSignature {
    /// The algorithm line that starts every canonical request.
    public static let algorithm = "RUNWAY-HMAC-SHA256-2"

    /// The header fields of a signed request.
    public enum Field {
        public static let keyID = HTTPField.Name("X-Runway-Key-Id")!
        public static let timestamp = HTTPField.Name("X-Runway-Timestamp")!
        public static let nonce = HTTPField.Name("X-Runway-Nonce")!
        public static let contentSHA256 = HTTPField.Name("X-Runway-Content-Sha256")!
        public static let signedHeaders = HTTPField.Name("X-Runway-Signed-Headers")!
        public static let signature = HTTPField.Name("X-Runway-Signature")!
        /// Every field the signature needs, in the order a verifier checks them.
        public static let all = [keyID, timestamp, nonce, contentSHA256, signedHeaders, signature]
    }

    /// What a signature's own fields may hold at most. A verifier refuses anything longer before
    /// it computes or remembers anything, so a caller holding the key (every installed app
    /// holds one) cannot make it store 60 KB per nonce; the signer refuses to make what a
    /// verifier would refuse.
    public enum Limits {
        /// The longest nonce, in bytes. A UUID is 36.
        public static let nonceLength = 128
        /// The longest key id, in bytes.
        public static let keyIDLength = 128
        /// The most header fields one request may sign.
        public static let signedFieldCount = 32
        /// The longest value of one signed header field (its repeats joined), in bytes.
        public static let signedFieldLength = 8_192
    }

    /// Checks `parts` against ``Limits``.
    ///
    /// - throws: ``FormatError`` naming the part that is too long.
    public static func checkLimits(_ parts: Parts) throws(FormatError) {
        if parts.nonce.utf8.count > Limits.nonceLength {
            throw FormatError(reason: "the nonce is longer than \(Limits.nonceLength) bytes")
        }
        if parts.keyID.utf8.count > Limits.keyIDLength {
            throw FormatError(reason: "the key id is longer than \(Limits.keyIDLength) bytes")
        }
        if parts.signedFields.count > Limits.signedFieldCount {
            throw FormatError(reason: "more than \(Limits.signedFieldCount) header fields are signed")
        }
        for field in parts.signedFields where (field.value?.utf8.count ?? 0) > Limits.signedFieldLength {
            throw FormatError(reason: "the signed field \(field.name) is longer than \(Limits.signedFieldLength) bytes")
        }
    }

    /// Why a request cannot be put in canonical form.
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, for people.
        public let reason: String
        public var description: String { reason }
    }

    /// The parts of a request the canonical text is made of.
    public struct Parts: Sendable {
        public var method: String
        public var scheme: String
        public var authority: String
        /// Path and query, as sent.
        public var pathAndQuery: String
        /// The signed header names, lowercase, and each one's value (`nil` when absent).
        public var signedFields: [(name: String, value: String?)]
        public var bodySHA256: String
        public var timestamp: Int64
        public var nonce: String
        public var keyID: String

        /// Creates the parts.
        public init(
            method: String, scheme: String, authority: String, pathAndQuery: String,
            signedFields: [(name: String, value: String?)], bodySHA256: String, timestamp: Int64, nonce: String,
            keyID: String
        ) {
            self.method = method
            self.scheme = scheme
            self.authority = authority
            self.pathAndQuery = pathAndQuery
            self.signedFields = signedFields
            self.bodySHA256 = bodySHA256
            self.timestamp = timestamp
            self.nonce = nonce
            self.keyID = keyID
        }
    }

    /// The canonical request text of `parts`.
    ///
    /// - throws: ``FormatError`` when the query is not validly percent-encoded, or a part is
    ///   longer than ``Limits`` allow.
    public static func canonicalRequest(_ parts: Parts) throws(FormatError) -> String {
        try checkLimits(parts)
        let (path, query) = split(parts.pathAndQuery)
        let fields = parts.signedFields
            .map { (name: $0.name.lowercased(), value: $0.value.map(trimmed) ?? "") }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let scheme = parts.scheme.lowercased()
        var lines: [String] = [
            algorithm, parts.method, scheme, canonicalAuthority(parts.authority, scheme: scheme), path,
            try canonicalQuery(query), fields.map(\.name).joined(separator: ";"),
        ]
        lines += fields.map { "\($0.name):\($0.value)" }
        lines += [parts.bodySHA256, String(parts.timestamp), parts.nonce, parts.keyID]
        return lines.joined(separator: "\n")
    }

    /// The lowercase authority without the scheme's default port.
    public static func canonicalAuthority(_ authority: String, scheme: String) -> String {
        let lowered = authority.lowercased()
        for (defaultScheme, port) in [("http", ":80"), ("https", ":443")] where scheme == defaultScheme && lowered.hasSuffix(port) {
            return String(lowered.dropLast(port.count))
        }
        return lowered
    }

    /// The canonical query: pairs percent-decoded to bytes and re-encoded, a literal `+` kept,
    /// stably sorted by name.
    ///
    /// - throws: ``FormatError`` for a `%` without two hex digits or a byte that must be
    ///   percent-encoded.
    public static func canonicalQuery(_ query: String?) throws(FormatError) -> String {
        guard let query, !query.isEmpty else { return "" }
        var pairs: [(name: String, value: String)] = []
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try reencode(parts[0])
            let value = parts.count > 1 ? try reencode(parts[1]) : ""
            pairs.append((name, value))
        }
        // Swift's sort is not stable; sorting the indices by (name, position) keeps repeats in order.
        let order = pairs.indices.sorted { left, right in
            pairs[left].name == pairs[right].name
                ? left < right : pairs[left].name.utf8.lexicographicallyPrecedes(pairs[right].name.utf8)
        }
        return order.map { "\(pairs[$0].name)=\(pairs[$0].value)" }.joined(separator: "&")
    }

    private static func reencode(_ component: some Collection<UInt8>) throws(FormatError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(component.count)
        var index = component.startIndex
        while index != component.endIndex {
            let byte = component[index]
            var decoded = byte
            if byte == UInt8(ascii: "%") {
                let first = component.index(after: index)
                guard first != component.endIndex, let high = hexValue(component[first]) else {
                    throw FormatError(reason: "a % in the query is not followed by two hex digits")
                }
                let second = component.index(after: first)
                guard second != component.endIndex, let low = hexValue(component[second]) else {
                    throw FormatError(reason: "a % in the query is not followed by two hex digits")
                }
                decoded = high << 4 | low
                index = second
            } else if byte == UInt8(ascii: "+") {
                output.append(byte)
                index = component.index(after: index)
                continue
            } else if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") {
                throw FormatError(reason: "the query holds a byte that must be percent-encoded (\(byte))")
            }
            if isUnreserved(decoded) {
                output.append(decoded)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(upperHex[Int(decoded >> 4)])
                output.append(upperHex[Int(decoded & 0x0F)])
            }
            index = component.index(after: index)
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The 32 bytes of a 64-digit hex text (a SHA-256 or HMAC-SHA256), or `nil`.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        guard text.utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var iterator = text.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = hexValue(high), let l = hexValue(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        return bytes
    }

    private static func trimmed(_ value: String) -> String {
        value.trimmingCharacters(in: .whitespaces)
    }

    /// The lowercase hex SHA-256 of `data` (of no bytes when `nil`).
    public static func sha256Hex(_ data: Data?) -> String {
        hex(SHA256.hash(data: data ?? Data()))
    }

    /// The lowercase hex HMAC-SHA256 of `text` under `secret`.
    public static func hmacHex(_ text: String, secret: SymmetricKey) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: secret))
    }

    /// Lowercase hex of `bytes`.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        // Written once into a string of the right size (the engine makes one per flight key),
        // straight from the bytes when they are contiguous.
        if let text = bytes.withContiguousStorageIfAvailable(hex(contiguous:)) { return text }
        return Array(bytes).withUnsafeBufferPointer(hex(contiguous:))
    }

    private static func hex(contiguous input: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: input.count * 2) { output in
            for (index, byte) in input.enumerated() {
                output[2 * index] = hexDigit(byte >> 4)
                output[2 * index + 1] = hexDigit(byte & 0x0F)
            }
            return input.count * 2
        }
    }

    /// The lowercase hex digit of `nibble` (0…15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Splits a request path into path and query at the first `?`.
    public static func split(_ pathAndQuery: String) -> (path: String, query: String?) {
        guard let mark = pathAndQuery.firstIndex(of: "?") else { return (pathAndQuery, nil) }
        return (String(pathAndQuery[..<mark]), String(pathAndQuery[pathAndQuery.index(after: mark)...]))
    }
}
