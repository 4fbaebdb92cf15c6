public import Foundation
public import HTTPTypes
public import OpenAPIRuntime
public import Runway

/// Runs the operations of a client made by swift-openapi-generator through a Runway
/// `Engine`: each call is a load of a registered `Service`, named by its `operationID`.
///
/// The generated client gets what a hand-written API gets: the service's environment and base
/// URL, its credentials (one refresh for any number of calls refused at once), its signer,
/// cookies, pins, adapters, interceptors and error handler; the cache, coalescing of identical
/// `GET`s, retries, deadlines and the request strategy of its ``OperationPolicy``; logs,
/// metrics, traces and HAR records under the operation's name; and `StubTransport` samples
/// found by `operationID`.
///
/// Every answer reaches the generated client as the response it is, whatever its status, once
/// Runway is done with it (a refused credential renewed, a 503 retried as the policy says): the
/// generated code decodes documented statuses and reports undocumented ones. A load that ends
/// without an answer — no network, a timeout, a cancellation, a refused signature, a user who
/// signed out meanwhile — throws its `RunwayError`, which the generated client hands on inside
/// its `ClientError` (`underlyingError`).
///
/// The server URL given to the generated client is not used: the service's base URL for the
/// engine's environment decides where a request goes.
public struct RunwayClientTransport: ClientTransport {
    /// The engine the operations run on.
    public let engine: Engine
    /// The registered service the operations belong to.
    public let service: ServiceID
    /// The policy of every operation without one of its own.
    public var defaultPolicy: OperationPolicy
    /// Policies by `operationID`.
    public var policies: [String: OperationPolicy]
    /// The largest request body taken from the generated client, in bytes; a larger one is
    /// refused with `RunwayError/invalidRequest(reason:)` before anything is sent.
    public var maximumRequestBodySize: Int

    /// The calls in flight of the operations that cancel the earlier one.
    private let inFlight = InFlightOperations()

    /// A transport for the operations of `service` on `engine`.
    public init(
        engine: Engine, service: ServiceID, defaultPolicy: OperationPolicy = OperationPolicy(),
        policies: [String: OperationPolicy] = [:], maximumRequestBodySize: Int = 32 << 20
    ) {
        self.engine = engine
        self.service = service
        self.defaultPolicy = defaultPolicy
        self.policies = policies
        self.maximumRequestBodySize = maximumRequestBodySize
    }

    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let policy = policies[operationID] ?? defaultPolicy
        let target = try OperationTarget(request.path ?? "/")
        var headers = request.headerFields
        let contentType = headers[.contentType] ?? "application/octet-stream"
        // The engine writes both for the body it sends.
        headers[.contentType] = nil
        headers[.contentLength] = nil
        let requestBody = try await collect(body, of: operationID, contentType: contentType)
        let api = OperationAPI(
            name: operationID, service: service, path: target.path, method: request.method, headers: headers, policy: policy)
        let engine = engine
        let load: @Sendable () async -> CallCoalescer.Outcome = {
            let (result, answer) = await engine.performReadingEveryStatus(api, params: target.params, body: requestBody)
            return CallCoalescer.Outcome(result: result, answer: answer)
        }
        let outcome: CallCoalescer.Outcome
        switch policy.requestStrategy {
        case .allowConcurrent: outcome = await load()
        case .cancelInFlight: outcome = await inFlight.replacing(operationID, with: load)
        case .ignoreNewWhileLoading:
            // The engine's coalescer, keyed by the operation instead of the request: a caller
            // that leaves stops waiting, and the load is cancelled when nobody waits.
            outcome = await engine.coalescer.run("operation \(service.rawValue) \(operationID)", load)
        }
        return try outcome.response(for: request.method)
    }

    /// The generated client's body, whole, as the engine sends it (and a signer hashes it).
    private func collect(_ body: HTTPBody?, of operationID: String, contentType: String) async throws(RunwayError) -> RequestBody? {
        guard let body else { return nil }
        do {
            return .data(try await Data(collecting: body, upTo: maximumRequestBodySize), contentType: contentType)
        } catch {
            throw .invalidRequest(
                reason: "the request body of \(operationID) is over \(maximumRequestBodySize) bytes or could not be read: \(error)")
        }
    }
}

extension CallCoalescer.Outcome {
    /// The response the generated client reads: the answer, whatever its status; or the error
    /// of a load that ended without one.
    func response(for method: HTTPRequest.Method) throws(RunwayError) -> (HTTPResponse, HTTPBody?) {
        switch result {
        case .success(let raw):
            return (raw.response, method == .head ? nil : HTTPBody(raw.body))
        case .failure(.httpStatus(let code, let body)):
            let head = answer.flatMap { $0.status.code == code ? $0 : nil } ?? HTTPResponse(status: .init(code: code))
            return (head, method == .head ? nil : HTTPBody(body))
        case .failure(let error):
            throw error
        }
    }
}
