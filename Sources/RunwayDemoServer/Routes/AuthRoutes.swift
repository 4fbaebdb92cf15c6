import Foundation
import Hummingbird
import RunwayServer
import NIOConcurrencyHelpers

/// A token service and one protected resource, so that credential refresh is shown (and tested)
/// against a real server.
///
/// - `POST /auth/token` with a JSON body `{"refresh_token": "…"}` — a new access token
///   (`{"access_token": "access-N"}`); every earlier one stops being accepted. The refresh token
///   `revoked` gets 401.
/// - `GET /auth/me` — 200 for `Authorization: Bearer <the latest access token>`, 401 with a
///   `WWW-Authenticate: Bearer` challenge otherwise (before the first refresh every token is
///   expired).
/// - `POST /auth/orders` — the same check; an order accepted answers whose token placed it
///   (`{"placed_with": "<token>"}`), so a test sees which user a request was sent as.
enum AuthRoutes {
    static func add(to router: some RouterMethods<ServerRequestContext>, probe: ServerProbe) {
        let current = NIOLockedValueBox<String?>(nil)
        router.post("/auth/token") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            let refreshToken = object?["refresh_token"] as? String
            guard let refreshToken, refreshToken != "revoked" else {
                probe.record("/auth/token")
                return JSONResponse.make(["error": "invalid_grant"], status: .unauthorized)
            }
            let issued = probe.record("/auth/token")
            let token = "access-\(issued)"
            current.withLockedValue { $0 = token }
            return JSONResponse.make(["access_token": token])
        }
        /// The latest token the request presents, or the refusal it gets (recorded as `route/refused`).
        let bearer: @Sendable (Request, String) -> Result<String, RefusedToken> = { request, route in
            let presented = request.headers[.authorization]
            let accepted = current.withLockedValue { token in token.map { "Bearer \($0)" } == presented }
            guard accepted, let presented else {
                probe.record("\(route)/refused")
                return .failure(RefusedToken())
            }
            probe.record(route)
            return .success(String(presented.dropFirst("Bearer ".count)))
        }
        router.get("/auth/me") { request, _ -> Response in
            switch bearer(request, "/auth/me") {
            case .success(let token): JSONResponse.success(["user": "demo", "token": token])
            case .failure(let refusal): refusal.response
            }
        }
        router.post("/auth/orders") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 64 * 1024)
            return switch bearer(request, "/auth/orders") {
            case .success(let token): JSONResponse.success(["placed_with": token])
            case .failure(let refusal): refusal.response
            }
        }
    }
}

/// A bearer token that is not the latest one issued.
struct RefusedToken: Error {
    /// 401 with the challenge every 401 carries (RFC 9110 §15.5.2; RFC 6750 §3 for bearer
    /// tokens): a client must land it as the 401 it is, never wait on it.
    var response: Response {
        var refused = JSONResponse.make(["error": "token_expired"], status: .unauthorized)
        refused.headers[.wwwAuthenticate] = #"Bearer realm="runway-demo", error="invalid_token""#
        return refused
    }
}
