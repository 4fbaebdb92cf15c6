import Foundation
import HTTPTypes

/// The one rule for taking credentials out of a request or an answer before anything shows or
/// writes it: ``RawResponse/request``, delegates and interceptors, the log line, HAR records.
///
/// - Header fields that carry who asks (``alwaysRedacted``) and those an ``Authenticator`` set,
///   under whatever names it chose: the field stays, its value reads ``placeholder``.
/// - Query params whose names say token, sign, password, secret, key, auth or session
///   (``isSensitive(name:)``), and those an authenticator set: the name stays, the value goes.
/// - In bodies kept for a record (JSON objects, forms): the values of members with such names —
///   a refresh token, a password, an access token in a token endpoint's answer.
///
/// Spans are stricter still: every query value of a URL in a span attribute is redacted
/// (OpenTelemetry's convention).
enum CredentialRedaction {
    /// What a redacted value reads.
    static let placeholder = "<redacted>"

    /// Fields that carry who is asking whatever set them: credentials, cookies, the request's
    /// signature and a temporary AWS session token.
    static let alwaysRedacted: Set<HTTPField.Name> = Set(
        [.authorization, .proxyAuthorization, .cookie, RequestSignature.Field.signature]
            + ["X-Amz-Security-Token"].compactMap { HTTPField.Name($0) })

    /// What an authenticator wrote into a request: the header fields and query params whose
    /// values it changed.
    struct Marks: Sendable, Equatable {
        var fields: Set<HTTPField.Name> = []
        var queryNames: Set<String> = []
    }

    /// Name parts that mark a param as secret: `access_token`, `sign`, `api-key`, `password`, ….
    static let sensitiveNameParts: Set<String> = [
        "token", "sign", "signature", "password", "passwd", "secret", "key", "auth", "session", "sid",
    ]

    /// Whether a param or member named `name` holds a secret.
    static func isSensitive(name: String) -> Bool {
        // Part by part, without an array of parts: every query of every load passes here.
        let lowered = name.lowercased()
        var rest = lowered[...]
        while true {
            let end = rest.firstIndex { $0 == "_" || $0 == "-" || $0 == "." } ?? rest.endIndex
            if sensitiveNameParts.contains(String(rest[..<end])) { return true }
            guard end < rest.endIndex else { return false }
            rest = rest[rest.index(after: end)...]
        }
    }

    /// `request` with its secrets redacted: the fields in ``alwaysRedacted`` or `marks`, and the
    /// values of sensitive or marked query params.
    static func redacting(_ request: HTTPRequest, also marks: Marks = Marks()) -> HTTPRequest {
        var redacted = request
        if request.headerFields.contains(where: { alwaysRedacted.contains($0.name) || marks.fields.contains($0.name) }) {
            var fields = HTTPFields()
            for field in request.headerFields {
                let secret = alwaysRedacted.contains(field.name) || marks.fields.contains(field.name)
                fields.append(secret ? HTTPField(name: field.name, value: placeholder) : field)
            }
            redacted.headerFields = fields
        }
        if let path = request.path, path.utf8.contains(UInt8(ascii: "?")) {
            let kept = redactingQuery(inPath: path, also: marks.queryNames)
            if kept != path { redacted.path = kept }
        }
        return redacted
    }

    /// `response` with the values of the fields that hand out credentials redacted
    /// (`Set-Cookie`, `Authentication-Info`).
    static func redacting(_ response: HTTPResponse) -> HTTPResponse {
        let secret: Set<HTTPField.Name> = [.setCookie, .authenticationInfo]
        guard response.headerFields.contains(where: { secret.contains($0.name) }) else { return response }
        var redacted = response
        var fields = HTTPFields()
        for field in response.headerFields {
            fields.append(secret.contains(field.name) ? HTTPField(name: field.name, value: placeholder) : field)
        }
        redacted.headerFields = fields
        return redacted
    }

    /// `path` with the values of sensitive query params, and of those named in `names`, replaced
    /// by ``placeholder``.
    static func redactingQuery(inPath path: String, also names: Set<String> = []) -> String {
        // Most queries hold no secret: seen byte by byte, with no string made, in an ASCII path
        // (where the first `?` byte is the first `?` character).
        let bytes = path.utf8
        if names.isEmpty, bytes.allSatisfy({ $0 < 0x80 }), let byteMark = bytes.firstIndex(of: UInt8(ascii: "?")),
            !mayHoldSensitiveName(query: bytes[bytes.index(after: byteMark)...])
        {
            return path
        }
        guard let mark = path.firstIndex(of: "?") else { return path }
        let pairs = path[path.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false)
        /// The name of a pair whose value is a secret.
        func secretName(_ pair: Substring) -> String? {
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let name = String(pair[..<equals])
            let marked = !names.isEmpty && (names.contains(name) || names.contains(name.removingPercentEncoding ?? name))
            return marked || isSensitive(name: name) ? name : nil
        }
        // Most queries hold no secret: the path is handed back as it is, nothing rebuilt.
        guard pairs.contains(where: { secretName($0) != nil }) else { return path }
        let query = pairs.map { pair in secretName(pair).map { "\($0)=\(placeholder)" } ?? String(pair) }
        return path[..<mark] + "?" + query.joined(separator: "&")
    }

    /// Whether a query (the part after `?`) may have a param whose name ``isSensitive(name:)``
    /// says holds a secret: `false` only when every name is ASCII and none has a sensitive part
    /// (a name with other characters answers `true`, for the full check to decide). Every
    /// query of every load passes here, so it reads bytes and makes no string.
    static func mayHoldSensitiveName(query: Substring.UTF8View) -> Bool {
        var pairStart = query.startIndex
        while pairStart < query.endIndex {
            let pairEnd = query[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            // A pair without `=` has no value to hide.
            if let equals = query[pairStart..<pairEnd].firstIndex(of: UInt8(ascii: "=")) {
                var partStart = pairStart
                var cursor = pairStart
                while true {
                    let byte = cursor < equals ? query[cursor] : nil
                    if let byte, byte >= 0x80 { return true }
                    if byte == nil || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") {
                        if isSensitivePart(query[partStart..<cursor]) { return true }
                        guard cursor < equals else { break }
                        partStart = query.index(after: cursor)
                    }
                    cursor = query.index(after: cursor)
                }
            }
            pairStart = pairEnd < query.endIndex ? query.index(after: pairEnd) : pairEnd
        }
        return false
    }

    /// ``sensitiveNameParts`` as bytes, for ``mayHoldSensitiveName(query:)``.
    private static let sensitivePartBytes = sensitiveNameParts.map { Array($0.utf8) }

    /// Whether ASCII `part`, lowercased, is one of ``sensitiveNameParts``.
    private static func isSensitivePart(_ part: Substring.UTF8View.SubSequence) -> Bool {
        sensitivePartBytes.contains { secret in
            secret.count == part.count
                && zip(secret, part).allSatisfy { secretByte, byte in
                    secretByte == (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
                }
        }
    }

    /// What an authenticator's `apply` wrote: the fields whose values differ between `before`
    /// and `after`, and the query params whose values do.
    static func changes(from before: HTTPRequest, to after: HTTPRequest) -> Marks {
        let fields = Set(after.headerFields.map(\.name).filter { before.headerFields[values: $0] != after.headerFields[values: $0] })
        guard before.path != after.path else { return Marks(fields: fields) }
        let old = queryPairs(before.path), new = queryPairs(after.path)
        let names = Set(new.filter { pair in !old.contains { $0 == pair } }.map(\.name))
        return Marks(fields: fields, queryNames: names)
    }

    private static func queryPairs(_ path: String?) -> [(name: String, value: String)] {
        guard let path, let mark = path.firstIndex(of: "?") else { return [] }
        return path[path.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts.first ?? ""), parts.count == 2 ? String(parts[1]) : "")
        }
    }

    /// The largest JSON or form body redacted member by member; a larger one is kept as nothing
    /// rather than parsed whole for a record (or kept cut, with its secrets).
    static let largestRedactedBody = 1 << 20

    /// `body` with the values of sensitive members redacted, when it is a JSON document or a
    /// form (by `contentType`, or by its first byte); any other body as it is.
    static func redactingBody(_ body: Data, contentType: String?) -> Data {
        let type = contentType?.lowercased() ?? ""
        let structured = type.contains("application/x-www-form-urlencoded") || type.contains("json")
            || body.first == UInt8(ascii: "{") || body.first == UInt8(ascii: "[")
        if structured, body.count > largestRedactedBody { return Data() }
        if type.contains("application/x-www-form-urlencoded") {
            let text = String(decoding: body, as: UTF8.self)
            return Data(redactingQuery(inPath: "?" + text).dropFirst().utf8)
        }
        guard type.contains("json") || body.first == UInt8(ascii: "{") || body.first == UInt8(ascii: "[") else { return body }
        guard let parsed = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return body }
        var changed = false
        let redacted = redactingMembers(parsed, changed: &changed)
        guard changed, let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return data
    }

    private static func redactingMembers(_ value: Any, changed: inout Bool) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (name, member) in object {
                if isSensitive(name: name), !(member is [String: Any]), !(member is [Any]) {
                    result[name] = placeholder
                    changed = true
                } else {
                    result[name] = redactingMembers(member, changed: &changed)
                }
            }
            return result
        }
        if let array = value as? [Any] { return array.map { redactingMembers($0, changed: &changed) } }
        return value
    }
}
