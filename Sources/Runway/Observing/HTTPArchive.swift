import Foundation
import HTTPTypes

/// HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/): what Chrome's and
/// Firefox's network panels, Charles and Proxyman open.
extension LoadRecorder {
    /// The recorded exchanges as an HTTP Archive 1.2 file: one page, one entry per request on
    /// the wire (a redirect hop is an entry of its own), oldest first.
    ///
    /// Header values carrying who asks read `<redacted>` (the engine redacts them before they
    /// are recorded), and `Set-Cookie` answers too. `httpVersion` is empty where the transport
    /// does not say (URLSession). Phases a transport could not report are
    /// `-1`, as the format asks; `send`, `wait` and `receive` are always given, and an entry's
    /// `time` is the sum of its non-negative phases.
    ///
    /// - parameter creator: The `creator.name` of the file.
    public func httpArchive(creator: String = "Runway") throws -> Data {
        let (exchanges, dropped) = exchangesAndDropped
        let started = exchanges.first?.startedAt ?? originDate
        var comment = "\(exchanges.count) requests on the wire"
        if dropped > 0 { comment += "; the \(dropped) oldest were dropped (the recorder keeps \(capacity))" }
        let log: [String: Any] = [
            "version": "1.2",
            "creator": ["name": creator, "version": "1"],
            "pages": [
                [
                    "startedDateTime": Self.timestamp(started), "id": Self.pageID, "title": creator,
                    "pageTimings": ["onContentLoad": -1, "onLoad": -1],
                ] as [String: Any]
            ],
            "entries": exchanges.map(Self.entry),
            "comment": comment,
        ]
        return try JSONSerialization.data(withJSONObject: ["log": log], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// Writes ``httpArchive(creator:)`` to `url`, replacing what is there, off the caller's actor
    /// (the file on a dispatch queue of its own, not on a thread of Swift's cooperative pool).
    @concurrent
    public func writeHTTPArchive(to url: URL, creator: String = "Runway") async throws {
        let archive = try httpArchive(creator: creator)
        try await BlockingWork.run { try archive.write(to: url, options: .atomic) }
    }

    static let pageID = "page_1"

    private static func entry(_ exchange: ExchangeRecord) -> [String: Any] {
        let timings = harTimings(exchange.timings)
        let total = ["blocked", "dns", "connect", "send", "wait", "receive"].reduce(0.0) { sum, key in
            sum + max(0, timings[key] ?? 0)
        }
        var entry: [String: Any] = [
            "pageref": pageID,
            "startedDateTime": timestamp(exchange.startedAt),
            "time": total,
            "request": request(exchange),
            "response": response(exchange),
            "cache": [String: Any](),
            "timings": timings,
            "_runway": [
                // As it is: an app's own load number may pass `Int`.
                "loadID": exchange.loadID.rawValue, "api": exchange.apiName, "attempt": exchange.attempt,
                "hop": exchange.hop,
            ] as [String: Any],
        ]
        if let error = exchange.error { entry["comment"] = "failed: \(error)" }
        return entry
    }

    private static func request(_ exchange: ExchangeRecord) -> [String: Any] {
        let head = exchange.request
        let url = head.url
        var request: [String: Any] = [
            "method": head.method.rawValue,
            "url": url?.absoluteString ?? head.path ?? "",
            "httpVersion": exchange.httpVersion ?? "",
            "cookies": [Any](),
            "headers": fields(head.headerFields),
            "queryString": url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems }
                .map { $0.map { ["name": $0.name, "value": $0.value ?? ""] } } ?? [],
            "headersSize": -1,
            // As it is: a body's size may pass `Int` where it has 32 bits.
            "bodySize": exchange.requestBodySize ?? -1,
        ]
        if let body = exchange.requestBody, !body.isEmpty {
            request["postData"] = [
                "mimeType": head.headerFields[.contentType] ?? "application/octet-stream",
                "text": String(decoding: body, as: UTF8.self),
            ]
        }
        return request
    }

    private static func response(_ exchange: ExchangeRecord) -> [String: Any] {
        guard let head = exchange.response else {
            return [
                "status": 0, "statusText": "", "httpVersion": exchange.httpVersion ?? "", "cookies": [Any](),
                "headers": [Any](), "content": ["size": 0, "mimeType": "x-unknown"], "redirectURL": "",
                "headersSize": -1, "bodySize": -1,
            ]
        }
        var content: [String: Any] = [
            "size": exchange.responseBodySize,
            "mimeType": head.headerFields[.contentType] ?? "x-unknown",
        ]
        if !exchange.responseBody.isEmpty {
            if let text = String(data: exchange.responseBody, encoding: .utf8) {
                content["text"] = text
            } else {
                content["text"] = exchange.responseBody.base64EncodedString()
                content["encoding"] = "base64"
            }
            if exchange.responseBody.count < exchange.responseBodySize {
                content["comment"] = "the first \(exchange.responseBody.count) bytes of \(exchange.responseBodySize)"
            }
        }
        var fields = head.headerFields
        if fields[.setCookie] != nil { fields[.setCookie] = CredentialRedaction.placeholder }
        return [
            "status": head.status.code,
            "statusText": head.status.reasonPhrase,
            "httpVersion": exchange.httpVersion ?? "",
            "cookies": [Any](),
            "headers": self.fields(fields),
            "content": content,
            "redirectURL": head.headerFields[.location] ?? "",
            "headersSize": -1,
            "bodySize": exchange.responseBodySize,
        ]
    }

    private static func fields(_ fields: HTTPFields) -> [[String: String]] {
        fields.map { ["name": $0.name.rawName, "value": $0.value] }
    }

    /// The HAR phases, in milliseconds: `-1` for a phase not reported (or, for a connection
    /// phase, skipped on a reused connection — HAR's "does not apply").
    private static func harTimings(_ timings: PhaseTimings) -> [String: Double] {
        func ms(_ phase: PhaseTimings.Phase) -> Double { timings[phase]?.milliseconds ?? -1 }
        let tls = ms(.tls)
        // HAR counts the TLS handshake inside `connect` as well as in `ssl`.
        let connect = ms(.connect) < 0 ? -1 : ms(.connect) + max(0, tls)
        return [
            "blocked": ms(.connectionWait), "dns": ms(.dns), "connect": connect, "ssl": tls,
            "send": max(0, ms(.send)), "wait": max(0, ms(.firstByte)), "receive": max(0, ms(.body)),
        ]
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
