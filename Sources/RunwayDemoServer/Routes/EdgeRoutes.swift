import Foundation
import HTTPTypes
import Hummingbird
import RunwayServer

/// Routes that answer correctly but at the edges of HTTP, where clients tend to differ.
///
/// - `GET /edges/late?seconds=` — a normal JSON answer after `seconds` of silence (before the
///   head): only the client's own deadline should decide how long that is too long.
/// - `GET /edges/repeated` — the field `X-Tag` twice (`one`, `two`) and two cookies in two
///   `Set-Cookie` fields, one with an `Expires` date (which holds a comma).
/// - `GET /edges/no-location?status=` — that 3xx status (default 302) with no `Location`.
enum EdgeRoutes {
    static func add(to router: Router<ServerRequestContext>, probe: ServerProbe) {
        router.get("/edges/late") { request, _ -> Response in
            probe.record("/edges/late")
            // `nan` and `inf` parse too, and a Duration of them stops the process.
            let seconds = request.uri.queryParameters["seconds"].flatMap { Double(String($0)) }.flatMap { $0.isFinite ? $0 : nil } ?? 1
            try await Task.sleep(for: .seconds(min(max(seconds, 0), 600)))
            return JSONResponse.success(["waited": seconds])
        }
        router.get("/edges/repeated") { _, _ -> Response in
            probe.record("/edges/repeated")
            var response = JSONResponse.success(["repeated": true])
            if let tag = HTTPField.Name("X-Tag") {
                response.headers.append(HTTPField(name: tag, value: "one"))
                response.headers.append(HTTPField(name: tag, value: "two"))
            }
            response.headers.append(HTTPField(name: .setCookie, value: "first=1; Path=/"))
            response.headers.append(
                HTTPField(name: .setCookie, value: "second=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"))
            return response
        }
        router.get("/edges/no-location") { request, _ -> Response in
            probe.record("/edges/no-location")
            let status = request.uri.queryParameters["status"].flatMap { Int(String($0)) } ?? 302
            return Response(status: .init(code: (300...399).contains(status) ? status : 302))
        }
    }
}
