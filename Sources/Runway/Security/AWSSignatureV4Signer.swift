import Crypto
import Foundation
public import HTTPTypes

/// Signs requests with AWS Signature Version 4, for services that speak it (API Gateway, S3-style
/// storage).
///
/// It builds the canonical request (method, canonical URI, sorted query, canonical headers,
/// signed header names, payload hash), the string to sign, the derived signing key, and adds the
/// `Authorization`, `x-amz-date` and — unless turned off — `x-amz-content-sha256` header fields.
/// Every header field present when it signs is signed, except those proxies may change
/// (`user-agent`, `expect`, hop-by-hop fields), plus `host`.
///
/// Like AWS's own SDKs, it corrects a device clock that is more than five minutes off: when a
/// service refuses a request for its time (`RequestTimeTooSkewed`, `RequestExpired`,
/// `RequestInTheFuture`, or a signature error while the server's clock is that far away), the
/// signer learns the server's clock — S3's `<ServerTime>`, else the `Date` field — and the
/// engine signs the request again, once.
///
/// For example:
///
/// ```swift
/// let signer = AWSSignatureV4Signer(
///     accessKeyID: "AKIDEXAMPLE", secretAccessKey: secret, region: "us-east-1", service: "execute-api")
/// ```
public struct AWSSignatureV4Signer: RequestSigner, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How the path is encoded in the canonical request.
    public enum Style: Sendable, Hashable {
        /// Every service but S3: dot segments and repeated slashes removed, then each character
        /// outside the unreserved set (and `/`) percent-encoded again — "encoded twice".
        case standard
        /// S3: the path exactly as sent.
        case s3
    }

    public let accessKeyID: String
    public let region: String
    public let service: String
    public let style: Style
    /// Whether `x-amz-content-sha256` is sent (and signed); S3 requires it.
    public let sendsContentSHA256: Bool
    private let secretAccessKey: String
    private let sessionToken: String?
    private let now: @Sendable () -> Date
    private let offset = ClockOffset()

    /// Seconds added to the signer's clock, learned from the last answer that refused a request
    /// for its time (0 until then).
    public var clockOffset: TimeInterval { offset.value }

    /// Error codes that say the request's time was refused.
    static let clockSkewCodes = ["RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture"]
    /// Error codes of a signature that did not match, which a wrong date in its scope causes too.
    static let signatureCodes = ["InvalidSignatureException", "SignatureDoesNotMatch", "AuthFailure"]
    /// How far apart the clocks must be before a refusal counts as the clock's fault: AWS's SDKs
    /// use five minutes.
    static let skewThreshold: TimeInterval = 300

    static let unsignedHeaders: Set<String> = [
        "authorization", "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
    ]

    /// Creates a signer.
    ///
    /// - parameters:
    ///   - accessKeyID: The access key id.
    ///   - secretAccessKey: The secret key; never printed.
    ///   - sessionToken: A temporary credential's token, sent as `x-amz-security-token`.
    ///   - region: For example `us-east-1`.
    ///   - service: For example `iam`, `execute-api`, `s3`.
    ///   - style: ``Style/s3`` for S3, otherwise ``Style/standard``.
    ///   - sendsContentSHA256: Whether to send `x-amz-content-sha256`.
    ///   - now: The clock; replace it in tests.
    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String, service: String,
        style: Style = .standard, sendsContentSHA256: Bool = true, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
        self.style = style
        self.sendsContentSHA256 = sendsContentSHA256
        self.now = now
    }

    public func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws {
        let (amzDate, date) = Self.timestamps(offset.adjusted(now()))
        let payloadHash = context.bodySHA256 ?? RequestSignature.sha256Hex(body)
        request.headerFields[.authorization] = nil
        request.headerFields[HTTPField.Name("X-Amz-Date")!] = amzDate
        if sendsContentSHA256 { request.headerFields[HTTPField.Name("X-Amz-Content-Sha256")!] = payloadHash }
        if let sessionToken { request.headerFields[HTTPField.Name("X-Amz-Security-Token")!] = sessionToken }

        let (canonical, signedHeaders) = canonicalRequest(request, payloadHash: payloadHash)
        let scope = "\(date)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, RequestSignature.sha256Hex(Data(canonical.utf8)),
        ].joined(separator: "\n")
        let signature = RequestSignature.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(date: date)))
        request.headerFields[.authorization] =
            "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// `Authorization` (the signature), `X-Amz-Date`, and `X-Amz-Content-Sha256` and
    /// `X-Amz-Security-Token` when it sends them.
    public var writtenFields: Set<HTTPField.Name> {
        var fields: Set<HTTPField.Name> = [.authorization, HTTPField.Name("X-Amz-Date")!]
        if sendsContentSHA256 { fields.insert(HTTPField.Name("X-Amz-Content-Sha256")!) }
        if sessionToken != nil { fields.insert(HTTPField.Name("X-Amz-Security-Token")!) }
        return fields
    }

    /// Learns the server's clock from a 4xx that names a time or signature error while the
    /// clocks are more than five minutes apart.
    public func correctsClock(after response: HTTPResponse, body: Data) -> Bool {
        guard (400...403).contains(response.status.code), !body.isEmpty else { return false }
        let text = String(decoding: body.prefix(16 << 10), as: UTF8.self)
        guard (Self.clockSkewCodes + Self.signatureCodes).contains(where: { text.contains($0) }),
            let serverTime = Self.serverTime(inErrorBody: text) ?? response.headerFields[.date].flatMap(HTTPDate.parse)
        else { return false }
        let local = now()
        guard abs(serverTime.timeIntervalSince(offset.adjusted(local))) > Self.skewThreshold else { return false }
        return offset.learn(serverTime: serverTime, localTime: local)
    }

    /// S3's `<ServerTime>2026-11-25T08:00:00Z</ServerTime>` in an error body.
    static func serverTime(inErrorBody text: String) -> Date? {
        guard let open = text.range(of: "<ServerTime>"),
            let close = text.range(of: "</ServerTime>", range: open.upperBound..<text.endIndex)
        else { return nil }
        return try? Date(String(text[open.upperBound..<close.lowerBound]), strategy: .iso8601)
    }

    /// The canonical request and the signed header names, as AWS defines them.
    func canonicalRequest(_ request: HTTPRequest, payloadHash: String) -> (String, String) {
        let (rawPath, query) = RequestSignature.split(request.path ?? "/")
        var headers: [String: [String]] = [:]
        for field in request.headerFields {
            let name = field.name.canonicalName
            guard !Self.unsignedHeaders.contains(name) else { continue }
            headers[name, default: []].append(Self.trimAll(field.value))
        }
        if headers["host"] == nil { headers["host"] = [Self.host(of: request)] }
        let names = headers.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let canonicalHeaders = names.map { "\($0):\(headers[$0, default: []].joined(separator: ","))" }.joined(separator: "\n")
        let signedHeaders = names.joined(separator: ";")
        let canonical = [
            request.method.rawValue, canonicalURI(rawPath), Self.canonicalQuery(query), canonicalHeaders + "\n",
            signedHeaders, payloadHash,
        ].joined(separator: "\n")
        return (canonical, signedHeaders)
    }

    func canonicalURI(_ path: String) -> String {
        switch style {
        case .s3: return path.isEmpty ? "/" : path
        case .standard:
            let normalized = Self.removeDotSegments(path.isEmpty ? "/" : path)
            var output = ""
            for byte in normalized.utf8 {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"), UInt8(ascii: "/"):
                    output.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    output += String(format: "%%%02X", byte)
                }
            }
            return output
        }
    }

    /// RFC 3986 §5.2.4, and repeated slashes collapsed, as AWS requires.
    static func removeDotSegments(_ path: String) -> String {
        guard !path.isEmpty else { return "/" }
        var output: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) where segment != "." {
            if segment == ".." { _ = output.popLast() } else { output.append(segment) }
        }
        let first = path.hasPrefix("/") ? "/" : ""
        let last = path.hasSuffix("/") && !output.isEmpty ? "/" : ""
        return first + output.joined(separator: "/") + last
    }

    /// The query's pairs as sent, sorted by name then value.
    static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        return pairs.sorted { left, right in
            left.0 == right.0
                ? left.1.utf8.lexicographicallyPrecedes(right.1.utf8) : left.0.utf8.lexicographicallyPrecedes(right.0.utf8)
        }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// Leading and trailing white space removed and inner runs folded to one space.
    static func trimAll(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
    }

    /// The lowercase host, with the port unless it is the scheme's default.
    static func host(of request: HTTPRequest) -> String {
        let authority = (request.authority ?? "").lowercased()
        let scheme = (request.scheme ?? "https").lowercased()
        for (defaultScheme, port) in [("http", ":80"), ("https", ":443")] where scheme == defaultScheme && authority.hasSuffix(port) {
            return String(authority.dropLast(port.count))
        }
        return authority
    }

    func signingKey(date: String) -> SymmetricKey {
        func hmac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
            SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
        }
        let secret = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        return hmac(hmac(hmac(hmac(secret, date), region), service), "aws4_request")
    }

    static func timestamps(_ date: Date) -> (amzDate: String, date: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(
            format: "%04d%02d%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
        let time = String(format: "%02d%02d%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        return ("\(day)T\(time)Z", day)
    }

    /// Names the access key id only.
    public var description: String { "AWSSignatureV4Signer(accessKeyID: \(accessKeyID), region: \(region), service: \(service))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyID": accessKeyID, "region": region, "service": service])
    }
}
