public import Foundation
public import HTTPTypes

extension RequestSignature {
    /// The scheme of the challenge a verifier sends with a 401.
    public static let challengeScheme = "RUNWAY-HMAC-SHA256"

    /// The challenge's `error` when the request's timestamp is outside the verifier's window:
    /// the device's clock is wrong, not its credential, so the client corrects its clock and
    /// signs again rather than signing in again.
    public static let clockSkewError = "request_time_skewed"

    /// The `WWW-Authenticate` value of a 401 for a timestamp outside the window: the error code
    /// and the verifier's time in Unix seconds (`server_time`), which the client's signer learns
    /// its offset from. (The `Date` field says it too, but a proxy may rewrite it, and it is the
    /// HTTP server's clock, not necessarily the verifier's.)
    public static func clockSkewChallenge(serverTime: Date) -> String {
        "\(challengeScheme) error=\"\(clockSkewError)\", server_time=\"\(Int64(serverTime.timeIntervalSince1970.rounded(.down)))\""
    }

    /// The server's time, when `response` is a verifier's 401 for a timestamp outside its
    /// window: its challenge's `server_time`, or else its `Date` field. `nil` for any other answer.
    public static func serverTime(ifClockSkewed response: HTTPResponse) -> Date? {
        guard response.status.code == 401 else { return nil }
        let challenge = AuthenticationChallenge.all(in: response).first {
            $0.scheme.caseInsensitiveCompare(challengeScheme) == .orderedSame && $0.parameters["error"] == clockSkewError
        }
        guard let challenge else { return nil }
        if let text = challenge.parameters["server_time"], let seconds = Int64(text) {
            return Date(timeIntervalSince1970: TimeInterval(seconds))  // any Int64 is a finite Double
        }
        return response.headerFields[.date].flatMap(HTTPDate.parse)
    }
}
