import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import RunwayServer

/// A document whose caching the tests and the revalidation benchmark steer, per key:
///
/// - `GET /caching/doc/{key}?size=&cc=&vary=` — `{"code":0,"data":{"version":…,"items":[…]}}` of
///   about `size` bytes (default 2,048), with `ETag: "v{version}"` and, when given,
///   `Cache-Control: {cc}` (and `Vary: {vary}`). A matching `If-None-Match` gets `304 Not Modified` (with the same
///   `ETag` and `Cache-Control`, no body). Counted as `/caching/doc/{key}`, a conditional one also
///   as `/caching/doc/{key} conditional`, a 304 as `/caching/doc/{key} 304`.
/// - `POST /caching/doc/{key}/change` — a new version (a new body and `ETag`).
/// - `POST /caching/doc/{key}/fail?status=` — later GETs answer `status` with no body (`1`:
///   break the connection after the first bytes) until `status=0`.
enum CachingRoutes {
    private struct Document {
        var version = 1
        var failing = 0

        /// The envelope with as many items as make about `size` bytes.
        func body(size: Int) -> Data {
            func encoded(_ count: Int) -> Data {
                let items = (0..<count).map { ["id": $0, "title": "Item \($0) of version \(version)"] as [String: Any] }
                let body = ["code": 0, "message": "ok", "data": ["version": version, "items": items]] as [String: Any]
                return (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
            }
            let guess = max(1, size / 40)
            let first = encoded(guess)
            guard first.count < size, !first.isEmpty else { return first }
            return encoded(max(guess, guess * size / first.count + 1))
        }
    }

    static func add(to router: some RouterMethods<ServerRequestContext>, probe: ServerProbe) {
        let documents = NIOLockedValueBox([String: Document]())
        router.get("/caching/doc/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            probe.record("/caching/doc/\(key)")
            let document = documents.withLockedValue { $0[key, default: Document()] }
            if document.failing == 1 {
                // The connection breaks after the first bytes of the body.
                return FaultRoutes.partialJSON { throw HTTPError(.internalServerError) }
            }
            if document.failing != 0 {
                return Response(status: .init(code: document.failing), headers: [:], body: ResponseBody())
            }
            let query = request.uri.queryParameters
            var headers = HTTPFields()
            let tag = "\"v\(document.version)\""
            headers[.eTag] = tag
            if let control = query["cc"] { headers[.cacheControl] = String(control) }
            if let vary = query["vary"] { headers[.vary] = String(vary) }
            if let asked = request.headers[.ifNoneMatch] {
                probe.record("/caching/doc/\(key) conditional")
                if asked.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) {
                    probe.record("/caching/doc/\(key) 304")
                    return Response(status: .notModified, headers: headers, body: ResponseBody())
                }
            }
            let size = min(max(query["size"].flatMap { Int(String($0)) } ?? 2_048, 64), 1 << 20)
            let data = document.body(size: size)
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.post("/caching/doc/:key/change") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let version = documents.withLockedValue { documents -> Int in
                documents[key, default: Document()].version += 1
                return documents[key, default: Document()].version
            }
            return JSONResponse.success(["version": version])
        }
        router.post("/caching/doc/:key/fail") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let status = request.uri.queryParameters["status"].flatMap { Int(String($0)) } ?? 503
            documents.withLockedValue { $0[key, default: Document()].failing = status == 1 || (100...599).contains(status) ? status : 0 }
            return JSONResponse.success(["failing": status])
        }
    }
}
