import HTTPTypes
import Logging

/// The one log line a request gets when its load ends.
///
/// Header fields (where authorization, cookies and signatures travel) are never written, and
/// query values are redacted by ``CredentialRedaction``'s rule.
struct RequestLog {
    /// The path with the values of sensitive query params replaced by `<redacted>`
    /// (``CredentialRedaction``'s rule).
    static func redactedPath(_ path: String) -> String {
        CredentialRedaction.redactingQuery(inPath: path)
    }

    static func write(
        to logger: Logger, loadID: LoadID, service: ServiceID, apiName: String, request: HTTPRequest?,
        method: HTTPRequest.Method, result: Result<ResponseOrigin, RunwayError>, status: Int?, bytes: Int,
        attempts: Int, duration: Duration, httpVersion: String? = nil, address: String? = nil
    ) {
        let level = Self.level(of: result)
        guard logger.logLevel <= level else { return }
        let milliseconds = duration.milliseconds
        let outcome: String
        switch result {
        case .success(let origin):
            switch origin {
            case .network: outcome = "success"
            case .cache(let tier, _, let isStale): outcome = "success (\(isStale ? "stale " : "")\(tier.rawValue) cache)"
            case .revalidated(let tier): outcome = "success (\(tier.rawValue) cache, revalidated)"
            }
        case .failure(.cancelled): outcome = "cancelled"
        case .failure(let error): outcome = "failure: \(error.messageKey)"
        }
        let statusText = status.map(String.init) ?? "-"
        var target = request.map { "\($0.scheme ?? "")://\($0.authority ?? "")\(redactedPath($0.path ?? ""))" } ?? "-"
        // The address an endpoint selector chose, when DNS was not asked.
        if let address { target += " via \(address)" }
        logger.log(
            level: level,
            "\(loadID) \(service)/\(apiName) \(method.rawValue) \(target) \(statusText) \(String(format: "%.1f", milliseconds))ms \(bytes)B \(outcome)",
            metadata: [
                "runway.load": "\(loadID)", "runway.service": "\(service)", "runway.api": "\(apiName)",
                "http.method": "\(method.rawValue)", "http.status": "\(statusText)",
                "runway.duration_ms": "\(String(format: "%.1f", milliseconds))", "runway.bytes": "\(bytes)",
                "runway.attempts": "\(attempts)", "runway.outcome": "\(outcome)",
                "http.version": "\(httpVersion ?? "-")", "net.peer.address": "\(address ?? "-")",
            ])
    }
}

extension RequestLog {
    /// The level a load's line is written at: `notice` for failures other than cancellation,
    /// `info` otherwise.
    static func level<Value>(of result: Result<Value, RunwayError>) -> Logger.Level {
        result.isFailureOtherThanCancel ? .notice : .info
    }
}

extension Result where Failure == RunwayError {
    /// Failures worth a `notice`: everything but success and cancellation.
    var isFailureOtherThanCancel: Bool {
        switch self {
        case .success, .failure(.cancelled): return false
        case .failure: return true
        }
    }
}
