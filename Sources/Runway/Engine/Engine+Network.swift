import Foundation
import HTTPTypes
import Logging

/// What the attempts of one load saw, for its log line.
struct Attempts: Sendable {
    var count = 0
    var request: HTTPRequest?
    var status: Int?
    var bytes = 0
    var httpVersion: String?
}

extension Engine {
    /// Every attempt of one call over the network: build, sign, send, land, and retry what the
    /// API's policy retries.
    func network(_ api: some API, params: Parameters, registered: RegisteredService) async -> (
        Result<RawResponse, RunwayError>, Attempts
    ) {
        let service = registered.service
        var seen = Attempts()
        while true {
            seen.count += 1
            let attempt = seen.count
            var retryAfter: Duration?
            let outcome: Result<RawResponse, RunwayError>
            do throws(RunwayError) {
                var prepared = try RequestBuilder.build(
                    api: api, service: service, base: registered.baseURL.get(), params: params)
                if let signer = service.signer {
                    do {
                        try signer.sign(
                            &prepared.head, body: prepared.body,
                            context: SigningContext(apiName: api.name, service: service.id, attempt: attempt))
                    } catch {
                        throw RunwayError.invalidRequest(reason: "signing failed: \(type(of: error))")
                    }
                }
                seen.request = prepared.head
                let response = try await send(prepared, api: api)
                seen.status = response.head.status.code
                seen.bytes = response.body.count
                seen.httpVersion = response.httpVersion
                retryAfter = Landing.retryAfter(in: response.head)
                outcome = Landing.land(response, request: prepared.head, api: api, service: service, attempts: attempt)
            } catch {
                outcome = .failure(error)
            }
            if case .failure(let error) = outcome, !Task.isCancelled,
                api.retryPolicy.shouldRetry(after: error, method: api.method, attempt: attempt)
            {
                let delay = api.retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter)
                do {
                    try await sleep(delay)
                    continue
                } catch {
                    return (.failure(.cancelled), seen)
                }
            }
            return (outcome, seen)
        }
    }

    /// Sends one attempt, enforcing the API's timeout over the whole response.
    func send(_ prepared: PreparedRequest, api: some API) async throws(RunwayError) -> TransportResponse {
        let request = TransportRequest(head: prepared.head, body: prepared.body, timeout: api.timeout, apiName: api.name)
        let transport = self.transport
        let timeout = api.timeout
        do {
            if transport.enforcesTimeout {
                return try await transport.send(request)
            }
            return try await withThrowingTaskGroup(of: TransportResponse.self) { group in
                group.addTask { try await transport.send(request) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw RunwayError.timeout
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw RunwayError.cancelled }
                return first
            }
        } catch let error as RunwayError {
            throw Task.isCancelled ? .cancelled : error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw Task.isCancelled ? .cancelled : .transport(description: String(describing: error))
        }
    }

    func log(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ result: Result<RawResponse, RunwayError>,
        _ attempts: Attempts, _ duration: Duration
    ) {
        RequestLog.write(
            to: logger, loadID: loadID, service: service, apiName: api.name, request: attempts.request, method: api.method,
            result: result, status: attempts.status, bytes: attempts.bytes, attempts: attempts.count, duration: duration,
            httpVersion: attempts.httpVersion)
    }
}
