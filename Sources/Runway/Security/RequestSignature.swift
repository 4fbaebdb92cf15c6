import Crypto
import Foundation
public import HTTPTypes

/// Runway's request signature: the canonical request both the app and the server compute, and the
/// header fields that carry it.
///
/// The canonical request is these lines, joined by `\n`:
///
/// ```
/// RUNWAY-HMAC-SHA256
/// <method>                      GET
/// <path>                        /listings/esf   (as sent, without the query)
/// <canonical query>             pairs sorted by name then value, RFC 3986 percent-encoded
/// <body SHA-256>                lowercase hex; the hash of no bytes for an empty body
/// <timestamp>                   Unix seconds
/// <nonce>                       unique per request
/// <key id>                      which key signed
/// <API name>                    the API's name
/// ```
///
/// The signature is the lowercase hex HMAC-SHA256 of that text with the key's secret. The server
/// looks the key up by its id (many callers, one key each), recomputes, and compares in constant
/// time.
public enum RequestSignature {
    /// The algorithm line that starts every canonical request.
    public static let algorithm = "RUNWAY-HMAC-SHA256"

    /// The header fields of a signed request.
    public enum Field {
        public static let keyID = HTTPField.Name("X-Runway-Key-Id")!
        public static let timestamp = HTTPField.Name("X-Runway-Timestamp")!
        public static let nonce = HTTPField.Name("X-Runway-Nonce")!
        public static let apiName = HTTPField.Name("X-Runway-Api")!
        public static let contentSHA256 = HTTPField.Name("X-Runway-Content-Sha256")!
        public static let signature = HTTPField.Name("X-Runway-Signature")!
        /// Every field the signature needs, in the order a verifier checks them.
        public static let all = [keyID, timestamp, nonce, apiName, signature]
    }

    /// The canonical request text.
    public static func canonicalRequest(
        method: String, path: String, query: String?, bodySHA256: String, timestamp: Int64, nonce: String,
        keyID: String, apiName: String
    ) -> String {
        [algorithm, method, path, canonicalQuery(query), bodySHA256, String(timestamp), nonce, keyID, apiName]
            .joined(separator: "\n")
    }

    /// The query with each name and value percent-decoded, re-encoded by RFC 3986, and the pairs
    /// sorted by name then value (byte order), so that equivalent spellings sign alike.
    public static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = reencode(String(parts[0]))
            let value = parts.count > 1 ? reencode(String(parts[1])) : ""
            return (name, value)
        }
        return pairs.sorted { left, right in
            left.0 == right.0
                ? left.1.utf8.lexicographicallyPrecedes(right.1.utf8) : left.0.utf8.lexicographicallyPrecedes(right.0.utf8)
        }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    private static func reencode(_ text: String) -> String {
        QueryEncoder.percentEncode(text.replacingOccurrences(of: "+", with: "%2B").removingPercentEncoding ?? text)
    }

    /// The lowercase hex SHA-256 of `data` (of no bytes when `nil`).
    public static func sha256Hex(_ data: Data?) -> String {
        hex(SHA256.hash(data: data ?? Data()))
    }

    /// The lowercase hex HMAC-SHA256 of `text` under `secret`.
    public static func hmacHex(_ text: String, secret: SymmetricKey) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: secret))
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var output = [UInt8]()
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Splits a request path into path and query at the first `?`.
    public static func split(_ pathAndQuery: String) -> (path: String, query: String?) {
        guard let mark = pathAndQuery.firstIndex(of: "?") else { return (pathAndQuery, nil) }
        return (String(pathAndQuery[..<mark]), String(pathAndQuery[pathAndQuery.index(after: mark)...]))
    }
}
