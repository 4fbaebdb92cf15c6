import Foundation
import Hummingbird

/// JSON answers of the verifier and the collector (and, inside this package, the demo server):
/// sorted keys, so the same answer is the same bytes.
package enum JSONResponse {
    /// `object` as JSON with sorted keys and `status`.
    package static func make(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return raw(data, status: status, contentType: "application/json; charset=utf-8")
    }

    /// The service's success envelope around `data`.
    package static func success(_ data: Any) -> Response {
        make(["code": 0, "message": "ok", "data": data])
    }

    /// The service's business-error envelope (HTTP 200, as such services answer).
    package static func businessError(code: Int, message: String) -> Response {
        make(["code": code, "message": message])
    }

    package static func raw(_ data: Data, status: HTTPResponse.Status = .ok, contentType: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    package static func html(_ text: String, status: HTTPResponse.Status) -> Response {
        raw(Data("<html><body><h1>\(text)</h1></body></html>".utf8), status: status, contentType: "text/html")
    }
}
