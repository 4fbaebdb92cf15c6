import Foundation
import HTTPTypes

extension Engine {
    /// Keeps one request on the wire and its answer in the recorder, with the credential's
    /// fields redacted.
    func record(
        _ request: PreparedRequest, response: Result<TransportResponse, RunwayError>, sentAt: ContinuousClock.Instant,
        attempt: Int, hop: Int, api: some API, loadID: LoadID?, redacting credentialNames: CredentialRedaction.Marks
    ) {
        guard let recorder else { return }
        let (startedAt, offset) = recorder.stamp(sentAt)
        let answer = try? response.get()
        var timings = answer?.timings ?? PhaseTimings()
        if answer == nil { timings[.firstByte] = ContinuousClock.now - sentAt }
        // Bodies and heads are kept as the one redaction rule leaves them: a refresh token in a
        // form, an access token in a token endpoint's answer and a session cookie are not.
        let requestBody = request.body?.data.map {
            CredentialRedaction.redactingBody($0, contentType: request.head.headerFields[.contentType])
        }
        let responseBody = answer.map {
            CredentialRedaction.redactingBody($0.body, contentType: $0.head.headerFields[.contentType])
        }
        recorder.record(
            ExchangeRecord(
                loadID: loadID ?? LoadID(rawValue: 0), apiName: api.name, attempt: attempt, hop: hop, startedAt: startedAt,
                offset: offset, request: CredentialRedaction.redacting(request.head, also: credentialNames),
                requestBody: requestBody.map(recorder.kept), requestBodySize: request.body?.length ?? 0,
                response: answer.map { CredentialRedaction.redacting($0.head) },
                responseBody: responseBody.map(recorder.kept) ?? Data(),
                responseBodySize: answer?.body.count ?? 0, httpVersion: answer?.httpVersion, timings: timings,
                error: Self.error(of: response)))
    }

    private static func error(of response: Result<TransportResponse, RunwayError>) -> RunwayError? {
        if case .failure(let error) = response { return error }
        return nil
    }

    /// OpenTelemetry's `network.protocol.version` for a transport's HTTP version (`"HTTP/2"` → `"2"`).
    static func protocolVersion(_ version: String) -> String {
        version.hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
    }

    /// The load's metrics: its outcome and duration, its retries, and a cache answer's tier.
    private func count<Value>(
        _ result: Result<Value, RunwayError>, api: String, service: ServiceID, attempts: Attempts, duration: Duration,
        in metrics: EngineMetrics
    ) {
        let outcome: String
        switch result {
        case .success(let value):
            outcome = "success"
            switch (value as? RawResponse)?.origin {
            case .cache(let tier, _, let isStale)?:
                metrics.cache(api: api, result: isStale ? "stale" : "hit", tier: tier.rawValue)
            case .revalidated(let tier)?:
                metrics.cache(api: api, result: "revalidated", tier: tier.rawValue)
            case .network?, nil:
                break
            }
        case .failure(.cancelled): outcome = "cancelled"
        case .failure(let error): outcome = error.messageKey
        }
        metrics.load(api: api, service: service, outcome: outcome, duration: duration, retries: max(attempts.count - 1, 0))
    }

    /// Writes the load's log line, counts its metrics and keeps its record.
    ///
    /// - parameter joined: Whether the load joined an identical one in flight.
    func log<Value>(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<Value, RunwayError>,
        _ attempts: Attempts, started: ContinuousClock.Instant, joined: Bool = false
    ) {
        let duration = ContinuousClock.now - started
        if let recorder {
            record(loadID, api, service: service, result, attempts, started: started, duration: duration, joined: joined, in: recorder)
        }
        if let metrics, metrics.reports {
            count(result, api: api.name, service: service, attempts: attempts, duration: duration, in: metrics)
        }
        // Nothing of the line is built when the level filters it out (as in production).
        guard logger.logLevel <= RequestLog.level(of: result) else { return }
        let origin = result.map { value in (value as? RawResponse)?.origin ?? .network }
        RequestLog.write(
            to: logger, loadID: loadID, service: service, apiName: api.name, request: attempts.request, method: attempts.request?.method ?? api.method,
            result: origin, status: attempts.status, bytes: attempts.bytes, attempts: attempts.count, duration: duration,
            httpVersion: attempts.httpVersion, address: attempts.address)
    }

    private func record<Value>(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<Value, RunwayError>, _ attempts: Attempts,
        started: ContinuousClock.Instant, duration: Duration, joined: Bool, in recorder: LoadRecorder
    ) {
        let (startedAt, offset) = recorder.stamp(started)
        let outcome: LoadRecord.Outcome
        var timings = PhaseTimings()
        switch result {
        case .success(let value):
            let response = value as? RawResponse
            timings = response?.timings ?? timings
            if case .cache(let tier, _, let isStale)? = response?.origin {
                outcome = .cache(tier: tier, isStale: isStale)
            } else if case .revalidated(let tier)? = response?.origin, !joined {
                outcome = .revalidated(tier: tier)
            } else {
                let status = response?.status.code ?? attempts.status ?? 0
                outcome = joined ? .joined(status: status) : .network(status: status)
            }
        case .failure(let error):
            outcome = joined ? .joined(status: nil) : .failed(error)
        }
        recorder.record(
            LoadRecord(
                loadID: loadID, apiName: api.name, service: service, startedAt: startedAt, offset: offset, duration: duration,
                outcome: outcome, timings: timings))
    }
}
