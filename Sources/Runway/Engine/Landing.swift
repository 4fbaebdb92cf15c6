import Foundation
import HTTPTypes

/// What happens to a response between the transport and the main actor: status check, JSON
/// parse, the service's convention, the API's response validator. It runs off the main actor.
enum Landing {
    static func land(
        _ response: TransportResponse, request: HTTPRequest, api: some API, service: Service, attempts: Int,
        origin: ResponseOrigin = .network, parsed: JSON? = nil, trace: LoadTrace? = nil
    ) -> Result<RawResponse, RunwayError> {
        var timings = response.timings
        let status = response.head.status
        guard status.kind == .successful else {
            return .failure(.httpStatus(code: status.code, body: response.body))
        }
        // HEAD answers and 204/205 carry no body by definition (RFC 9110 §9.3.2, §15.3.5–6):
        // a success with no JSON, and no envelope for the service's convention to read.
        let bodyless = request.method == .head || status.code == 204 || status.code == 205
        var json: JSON?
        if bodyless {
            json = nil
            timings.skip(.parse)
        } else if api.responseFormat == .json, let parsed {
            json = parsed
            timings.skip(.parse)
        } else if api.responseFormat == .json {
            guard !response.body.isEmpty, status != .noContent else { return .failure(.noContent) }
            let parseTrace = trace?.child("parse")
            parseTrace?.set("runway.body.size", Int64(response.body.count))
            let started = ContinuousClock.now
            defer { parseTrace?.end() }
            do {
                json = try JSON(parsing: response.body)
                timings[.parse] = ContinuousClock.now - started
            } catch {
                parseTrace?.fail(error)
                return .failure(error)
            }
        } else {
            timings.skip(.parse)
        }
        let raw = RawResponse(
            api: APISnapshot.answering(api), request: request, response: response.head, body: response.body, json: json,
            attempts: attempts, origin: origin, timings: timings)
        if !bodyless {
            do {
                try service.convention.check(raw)
            } catch {
                return .failure(error)
            }
        }
        do {
            try api.responseValidator.validate(raw)
        } catch {
            return .failure(.invalidResponse(reason: error.reason))
        }
        return .success(raw)
    }

    /// The wait an answer's `Retry-After` asks for: a number of seconds, or an HTTP date
    /// (RFC 9110 §10.2.3), counted from `now`; a date in the past is no wait.
    static func retryAfter(in head: HTTPResponse, now: Date = Date()) -> Duration? {
        guard let text = head.headerFields.value(of: .retryAfter)?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(text) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = HTTPDate.parse(text) else { return nil }
        let wait = date.timeIntervalSince(now)
        // Far beyond any policy's cap anyway: the cap applies, without a conversion that could trap.
        return .seconds(min(max(wait, 0), 365 * 86_400))
    }
}
