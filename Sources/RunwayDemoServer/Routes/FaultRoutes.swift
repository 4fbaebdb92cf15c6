import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import RunwayServer

/// Routes that misbehave on purpose, so clients can be tested against every failure a real
/// network produces.
///
/// - `GET /faults/not-json` — 200 with a JSON content type and an HTML body.
/// - `GET /faults/empty` — 200 with an empty body.
/// - `GET /faults/status/{code}` — that status with an HTML body.
/// - `GET /faults/hang` — never answers; when the client closes the connection the probe hears it.
/// - `GET|POST /faults/gate/{key}` — waits until the test opens gate `key` on the probe, then
///   succeeds (a POST is also counted as `POST /faults/gate/{key}`).
/// - `GET|POST /faults/flaky?key=&failures=&status=&retry_after=` — fails `failures` times per key
///   with `status` (default 503, `Retry-After` when given), then succeeds with the attempt count.
/// - `GET /faults/drop?key=&failures=` — breaks the connection mid-body `failures` times per key.
/// - `GET /faults/gzip` — a JSON list, gzip-encoded when the client accepts gzip.
/// - `GET /faults/encoded?as=` — the same list in the content coding `as` (`gzip`, `deflate`;
///   `raw-deflate`: labelled deflate, without zlib's header, as some servers send it; `gzip-cut`:
///   labelled gzip, the first half of the stream only, its length saying so), whatever
///   the client accepts; any other name labels the plain bytes with it (a coding the client
///   never offered).
/// - `GET /faults/challenge?scheme=` — 401 with `WWW-Authenticate: {scheme} realm="runway"`.
/// - `GET /faults/set-cookie` — 200 with `Set-Cookie: session=abc; Path=/`.
/// - `HEAD /faults/large-head` — 200 with `Content-Length: 41943040` and, as for every HEAD, no body.
/// - `GET /faults/skewed?server_time=` — a verifier's 401 for a skewed clock, naming that
///   server time (any text a hostile server may send).
/// - `GET /faults/aws-time` — answers as S3 does for the time of a SigV4 request: 403 with
///   `RequestTimeTooSkewed` and `<ServerTime>` when `X-Amz-Date` is more than 15 minutes from the
///   server's clock, else 200 with the date it got. (The signature itself is not checked.)
/// - `PUT /faults/reset-content` — 205 with no body.
/// - `GET /faults/chunked?bytes=` — `bytes` bytes of JSON string in chunks of 4 KB, with no
///   `Content-Length`: a body whose size shows only as it arrives.
/// - `GET /faults/drip?chunks=&interval_ms=` — the head at once, then one byte of a JSON body per
///   interval: a body slower than any sensible timeout.
/// - `GET /faults/stall` — the head and the first bytes of a body, then nothing until the
///   client closes the connection (the probe hears it).
/// - `DELETE /faults/no-content` — 204; `HEAD /faults/no-content` — 200 with header fields only.
/// - `GET /faults/cacheable?key=` — the count of requests for `key`, with
///   `Cache-Control: public, max-age=3600`: what an HTTP cache would keep.
/// - `ANY /faults/redirect-to/{status}/{path…}` — `status` with `Location: /{path…}`, for
///   requests whose params travel in the body.
/// - `ANY /faults/redirect?to=&status=` — `status` (default 302) with `Location: to` (`to=self`:
///   its own URL, a loop).
/// - `ANY /echo/…` — the request as the server saw it: method, path, raw query, headers, body.
enum FaultRoutes {
    /// SigV4's `X-Amz-Date` (`20261125T080000Z`), read as the ISO 8601 time it abbreviates.
    static func amzDate(_ text: String) -> Date? {
        let digits = Array(text)
        guard digits.count == 16, digits[8] == "T", digits[15] == "Z" else { return nil }
        let part = { (range: Range<Int>) in String(digits[range]) }
        let iso = "\(part(0..<4))-\(part(4..<6))-\(part(6..<8))T\(part(9..<11)):\(part(11..<13)):\(part(13..<15))Z"
        return try? Date(iso, strategy: .iso8601)
    }

    static func add(to router: Router<ServerRequestContext>, probe: ServerProbe) {
        router.get("/faults/not-json") { _, _ in
            probe.record("/faults/not-json")
            return JSONResponse.raw(Data("<html>not json</html>".utf8), contentType: "application/json")
        }
        router.get("/faults/empty") { _, _ in
            probe.record("/faults/empty")
            return JSONResponse.raw(Data(), contentType: "application/json")
        }
        router.get("/faults/status/:code") { _, context -> Response in
            let code = context.parameters.get("code").flatMap(Int.init) ?? 500
            guard let status = HTTPResponse.Status(named: code) else { return Self.noSuchStatus }
            probe.record("/faults/status/\(code)")
            return JSONResponse.html("Status \(code)", status: status)
        }
        router.get("/faults/hang") { request, _ -> Response in
            probe.record("/faults/hang")
            // Hold the response until the client goes away (or the server stops).
            try await holdUntilClientLeaves(request, probe: probe)
            return JSONResponse.html("released", status: .serviceUnavailable)
        }
        let gate: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, context in
            let key = context.parameters.get("key") ?? ""
            probe.record("/faults/gate/\(key)")
            if request.method == .post { probe.record("POST /faults/gate/\(key)") }
            await probe.passGate(key)
            return JSONResponse.success(["gate": key])
        }
        router.get("/faults/gate/:key", use: gate)
        router.post("/faults/gate/:key", use: gate)
        let flaky: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, _ in
            let query = request.uri.queryParameters
            let key = query["key"].map(String.init) ?? "default"
            let failures = query["failures"].flatMap { Int(String($0)) } ?? 1
            guard let status = HTTPResponse.Status(named: query["status"].flatMap { Int(String($0)) } ?? 503) else {
                return Self.noSuchStatus
            }
            let attempt = probe.record("/faults/flaky/\(key)")
            guard attempt > failures else {
                var response = JSONResponse.html("try again", status: status)
                if let retryAfter = query["retry_after"] {
                    response.headers[.retryAfter] = String(retryAfter)
                }
                return response
            }
            return JSONResponse.success(["attempt": attempt, "authorization": request.headers[.authorization] ?? ""])
        }
        router.get("/faults/flaky", use: flaky)
        router.post("/faults/flaky", use: flaky)
        router.get("/faults/drop") { request, _ -> Response in
            let query = request.uri.queryParameters
            let key = query["key"].map(String.init) ?? "default"
            let failures = query["failures"].flatMap { Int(String($0)) } ?? 1
            let attempt = probe.record("/faults/drop/\(key)")
            guard attempt > failures else {
                // Break the connection after the first bytes.
                return partialJSON { throw HTTPError(.internalServerError) }
            }
            return JSONResponse.success(["attempt": attempt])
        }
        router.get("/faults/gzip") { request, _ -> Response in
            probe.record("/faults/gzip")
            let items = (1...200).map { ["id": $0, "title": "Item number \($0) with a repetitive title"] }
            let data = (try? JSONSerialization.data(withJSONObject: ["items": items], options: [.sortedKeys])) ?? Data()
            let accepts = request.headers[.acceptEncoding]?.contains("gzip") ?? false
            guard accepts else { return JSONResponse.raw(data, contentType: "application/json") }
            var plain = ByteBuffer(bytes: data)
            let compressed = try plain.compress(with: .gzip())
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentEncoding] = "gzip"
            headers[.init("X-Uncompressed-Length")!] = String(data.count)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
        }
        router.get("/faults/encoded") { request, _ -> Response in
            probe.record("/faults/encoded")
            let coding = request.uri.queryParameters["as"].map(String.init) ?? "gzip"
            var body = ByteBuffer(bytes: encodedList)
            switch coding {
            case "gzip": body = try body.compress(with: .gzip())
            // RFC 9110's deflate is zlib's format; some servers send the bare stream instead.
            case "deflate": body = try body.compress(with: .zlib())
            case "raw-deflate": body = try body.compress(with: .deflate())
            // gzip cut short with its framing intact: the length says what was sent, but the
            // stream stops halfway and its trailer never comes.
            case "gzip-cut":
                let whole = try body.compress(with: .gzip())
                body = whole.getSlice(at: whole.readerIndex, length: whole.readableBytes / 2) ?? whole
            default: break
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentEncoding] = ["raw-deflate": "deflate", "gzip-cut": "gzip"][coding] ?? coding
            headers[.init("X-Uncompressed-Length")!] = String(encodedList.count)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
        }
        router.get("/faults/challenge") { request, _ -> Response in
            probe.record("/faults/challenge")
            let scheme = request.uri.queryParameters["scheme"].map(String.init) ?? "Basic"
            var response = JSONResponse.html("sign in", status: .unauthorized)
            response.headers[.wwwAuthenticate] = "\(scheme) realm=\"runway\""
            return response
        }
        router.get("/faults/aws-time") { request, _ -> Response in
            probe.record("/faults/aws-time")
            let sent = request.headers[HTTPField.Name("X-Amz-Date")!] ?? ""
            guard let signedAt = amzDate(sent) else {
                return JSONResponse.raw(Data("<Error><Code>MissingDate</Code></Error>".utf8), status: .badRequest, contentType: "application/xml")
            }
            let now = Date()
            guard abs(signedAt.timeIntervalSince(now)) <= 900 else {
                let error = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time and the \
                    current time is too large.</Message><RequestTime>\(sent)</RequestTime>\
                    <ServerTime>\(now.formatted(.iso8601))</ServerTime><MaxAllowedSkewMilliseconds>900000\
                    </MaxAllowedSkewMilliseconds></Error>
                    """
                return JSONResponse.raw(Data(error.utf8), status: .forbidden, contentType: "application/xml")
            }
            return JSONResponse.success(["amzDate": sent])
        }
        router.head("/faults/large-head") { _, _ -> Response in
            probe.record("/faults/large-head")
            return Response(status: .ok, headers: [.contentLength: "41943040", .contentType: "application/octet-stream"])
        }
        router.get("/faults/skewed") { request, _ -> Response in
            probe.record("/faults/skewed")
            let time = request.uri.queryParameters["server_time"].map(String.init) ?? "0"
            var refused = JSONResponse.make(["code": 401, "reason": "stale_timestamp"], status: .unauthorized)
            refused.headers[.wwwAuthenticate] = #"RUNWAY-HMAC-SHA256 error="request_time_skewed", server_time=""# + time + #"""#
            return refused
        }
        router.get("/faults/set-cookie") { _, _ -> Response in
            probe.record("/faults/set-cookie")
            var response = JSONResponse.success(["cookie": "set"])
            response.headers[.setCookie] = "session=abc; Path=/"
            return response
        }
        router.get("/faults/chunked") { request, _ -> Response in
            probe.record("/faults/chunked")
            let total = min(max(request.uri.queryParameters["bytes"].flatMap { Int(String($0)) } ?? 100_000, 2), Self.largestBody)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    var body = ByteBuffer(string: "\"" + String(repeating: "x", count: total - 2) + "\"")
                    while let chunk = body.readSlice(length: min(4096, body.readableBytes)), chunk.readableBytes > 0 {
                        try await writer.write(chunk)
                    }
                    try await writer.finish(nil)
                })
        }
        router.put("/faults/reset-content") { _, _ -> Response in
            probe.record("/faults/reset-content")
            return Response(status: .resetContent)
        }
        router.get("/faults/drip") { request, _ -> Response in
            probe.record("/faults/drip")
            let query = request.uri.queryParameters
            let chunks = min(query["chunks"].flatMap { Int(String($0)) } ?? 100, Self.largestBody)
            let interval = min(max(query["interval_ms"].flatMap { Int(String($0)) } ?? 100, 0), 60_000)
            let body = Array((String(repeating: " ", count: max(chunks - 2, 0)) + "{}").utf8)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(contentLength: body.count) { writer in
                    for byte in body {
                        try await writer.write(ByteBuffer(bytes: [byte]))
                        try await Task.sleep(for: .milliseconds(interval))
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("/faults/stall") { request, _ -> Response in
            // Counted once the head and the first bytes are written: a client whose deadline
            // ended before that (a loaded machine) never saw a stalled body, and a test waiting
            // for its connection to close would wait for a close that already happened.
            return partialJSON {
                probe.record("/faults/stall")
                // Hold the rest until the client goes away (or the server stops).
                try await holdUntilClientLeaves(request, probe: probe)
                throw HTTPError(.serviceUnavailable)
            }
        }
        router.delete("/faults/no-content") { _, _ -> Response in
            probe.record("/faults/no-content")
            return Response(status: .noContent)
        }
        router.head("/faults/no-content") { _, _ -> Response in
            probe.record("/faults/no-content")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[HTTPField.Name("X-Resource-Version")!] = "7"
            return Response(status: .ok, headers: headers)
        }
        router.get("/faults/cacheable") { request, _ -> Response in
            let key = request.uri.queryParameters["key"].map(String.init) ?? "default"
            let count = probe.record("/faults/cacheable/\(key)")
            var response = JSONResponse.success(["count": count])
            response.headers[.cacheControl] = "public, max-age=3600"
            return response
        }
        let redirect: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, _ in
            let query = request.uri.queryParameters
            var target = query["to"].map(String.init) ?? "/"
            if target == "self" { target = request.uri.description }
            guard let status = HTTPResponse.Status(named: query["status"].flatMap { Int(String($0)) } ?? 302) else {
                return Self.noSuchStatus
            }
            probe.record("/faults/redirect")
            var headers = HTTPFields()
            headers[.location] = target
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let redirectTo: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, context in
            let code = context.parameters.get("status").flatMap(Int.init) ?? 302
            guard let status = HTTPResponse.Status(named: code) else { return Self.noSuchStatus }
            let prefix = "/faults/redirect-to/\(code)"
            probe.record("/faults/redirect")
            var headers = HTTPFields()
            headers[.location] = String(request.uri.path.dropFirst(prefix.count))
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .head] {
            router.on("/faults/redirect", method: method, use: redirect)
            router.on("/faults/redirect-to/:status/**", method: method, use: redirectTo)
        }
        addEcho(to: router, probe: probe)
    }

    /// The most bytes a route whose size a client names makes: a client's number is input, and
    /// a body past it would take the memory of every test beside it.
    static let largestBody = 64 << 20

    /// The answer to a status no HTTP answer can carry.
    static var noSuchStatus: Response { JSONResponse.make(["error": "no such status"], status: .badRequest) }

    /// The JSON list `/faults/encoded` sends.
    static let encodedList: [UInt8] = {
        let items = (1...200).map { #"{"id":\#($0),"title":"Item number \#($0) with a repetitive title"}"# }
        return Array((#"{"items":["# + items.joined(separator: ",") + "]}").utf8)
    }()

    /// A 200 that promises 1,000 bytes of JSON, sends the first 11, then runs `rest` (which
    /// breaks the connection or holds it).
    static func partialJSON(then rest: @escaping @Sendable () async throws -> Void) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(contentLength: 1000) { writer in
                try await writer.write(ByteBuffer(string: "{\"partial\":"))
                try await rest()
            })
    }

    /// Signals `holdStarted`, then waits until the client closes the connection (signalling
    /// `holdClosed`) or the server stops.
    static func holdUntilClientLeaves(_ request: Request, probe: ServerProbe) async throws {
        probe.signal(.holdStarted)
        // Ends when the client leaves (so stopping the server does not wait for it) or when the
        // handler is cancelled: an AsyncStream's iteration ends on either.
        let (closed, close) = AsyncStream<Void>.makeStream()
        try await request.body.consumeWithInboundCloseHandler { _ in
            for await _ in closed { break }
        } onInboundClosed: {
            probe.signal(.holdClosed)
            close.finish()
        }
    }

    /// `ANY <group>/echo/…`: the request as the server saw it.
    static func addEcho(to router: some RouterMethods<ServerRequestContext>, probe: ServerProbe) {
        let echo: @Sendable (Request, ServerRequestContext) async throws -> Response = { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            // Counted once the body has arrived whole (and, behind the verifier, matched its hash).
            probe.record("/echo")
            var headers: [String: String] = [:]
            for field in request.headers {
                let name = field.name.canonicalName
                headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
            }
            return JSONResponse.make([
                "method": request.method.rawValue,
                "path": request.uri.path,
                "authority": request.head.authority ?? "",
                "query": request.uri.query ?? "",
                "headers": headers,
                "body": String(decoding: body.readableBytesView, as: UTF8.self),
            ])
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            router.on("/echo/**", method: method, use: echo)
        }
    }
}
