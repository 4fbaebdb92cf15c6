import HTTPTypes

/// What the attempts of one load saw, for its log line.
struct Attempts: Sendable {
    var count = 0
    /// The last request sent: the last hop of the last attempt.
    var request: HTTPRequest?
    var status: Int?
    var bytes = 0
    var httpVersion: String?
    /// The wait the last answer's `Retry-After` asked for.
    var retryAfter: Duration?
    /// The address the last request was sent to, when an endpoint selector chose it.
    var address: String?
    /// Whether the last attempt was sent and then ended because the device's network went
    /// away (rather than a load that found no network before it sent anything).
    var pathWentAway = false
    /// Whether the load joined an identical one in flight instead of sending its own.
    var joined = false
    /// The head of the last attempt's answer (`nil` when it got none): what a client that
    /// reads every status itself receives with a ``RunwayError/httpStatus(code:body:)``.
    var answer: HTTPResponse?
}
