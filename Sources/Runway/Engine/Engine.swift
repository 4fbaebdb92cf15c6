import Foundation
import HTTPTypes
public import Logging

/// The one place every call goes through: builds the request from service + API + params,
/// signs it, sends it through the transport, retries what may be retried, and lands the
/// response (status, JSON, convention, validator) — all off the main actor.
///
/// Business code rarely talks to the engine directly; ``APIManager`` does. An app usually keeps
/// one engine (``shared`` or its own) and registers its services with it.
///
/// For example:
///
/// ```swift
/// let engine = Engine(transport: URLSessionTransport())
/// engine.register(Service(id: .listings, baseURLs: [.release: "https://api.example.com"]))
/// let manager = APIManager(SecondHandListAPI(), engine: engine)
/// ```
public final class Engine: Sendable {
    /// The engine managers use when given none: URLSession transport, no services yet.
    public static let shared = Engine(transport: URLSessionTransport())

    /// The transport every request goes through.
    public let transport: any Transport
    /// Where each request's log line goes.
    public let logger: Logger
    private let services = Locked<[ServiceID: RegisteredService]>([:])
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Creates an engine.
    ///
    /// - parameters:
    ///   - transport: How requests are sent.
    ///   - logger: Receives one line per request; defaults to the label `runway`.
    ///   - sleep: Waits between retries; replace it to observe or shorten backoff in tests.
    public init(
        transport: any Transport,
        logger: Logger = Logger(label: "runway"),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.transport = transport
        self.logger = logger
        self.sleep = sleep
    }

    /// Adds `service`, or replaces the one registered under its identifier.
    public func register(_ service: Service) {
        let registered = RegisteredService(service)
        services.withLock { $0[service.id] = registered }
    }

    /// The service registered under `id`.
    public func service(_ id: ServiceID) -> Service? {
        services.withLock { $0[id]?.service }
    }

    /// Switches the service registered under `id` to `environment`; later requests use its
    /// base URL for that environment.
    ///
    /// - returns: `false` when no service is registered under `id`.
    @discardableResult
    public func setEnvironment(_ environment: Environment, for id: ServiceID) -> Bool {
        services.withLock { services in
            guard var service = services[id]?.service else { return false }
            service.environment = environment
            services[id] = RegisteredService(service)
            return true
        }
    }

    /// Performs one call of `api` with `params`: every attempt, landed and logged.
    ///
    /// Cancelling the calling task cancels the request on the wire and returns
    /// ``RunwayError/cancelled``.
    @concurrent
    public func perform<Endpoint: API>(
        _ api: Endpoint, params: Parameters, loadID: LoadID? = nil
    ) async -> Result<RawResponse, RunwayError> {
        let loadID = loadID ?? .next()
        let clock = ContinuousClock()
        let started = clock.now
        var attempt = 0
        var lastRequest: HTTPRequest?
        var lastStatus: Int?
        var bytes = 0
        let result: Result<RawResponse, RunwayError>
        guard let registered = services.withLock({ $0[api.service] }) else {
            result = .failure(.invalidRequest(reason: "no service is registered as \"\(api.service)\""))
            log(loadID, api, service: api.service, lastRequest, result, lastStatus, bytes, attempt, clock.now - started)
            return result
        }
        let service = registered.service
        while true {
            attempt += 1
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
                lastRequest = prepared.head
                let response = try await send(prepared, api: api)
                lastStatus = response.head.status.code
                bytes = response.body.count
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
                    result = .failure(.cancelled)
                    break
                }
            }
            result = outcome
            break
        }
        log(loadID, api, service: service.id, lastRequest, result, lastStatus, bytes, attempt, clock.now - started)
        return result
    }

    /// Sends one attempt, enforcing the API's timeout over the whole response.
    private func send(_ prepared: PreparedRequest, api: some API) async throws(RunwayError) -> TransportResponse {
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

    private func log(
        _ loadID: LoadID, _ api: some API, service: ServiceID, _ request: HTTPRequest?,
        _ result: Result<RawResponse, RunwayError>, _ status: Int?, _ bytes: Int, _ attempts: Int, _ duration: Duration
    ) {
        RequestLog.write(
            to: logger, loadID: loadID, service: service, apiName: api.name, request: request, method: api.method,
            result: result, status: status, bytes: bytes, attempts: attempts, duration: duration)
    }
}

/// A registered service with its base URL parsed once, not on every request.
struct RegisteredService: Sendable {
    let service: Service
    let baseURL: Result<RequestBuilder.BaseURL, RunwayError>

    init(_ service: Service) {
        self.service = service
        self.baseURL = Result { () throws(RunwayError) in try RequestBuilder.baseURL(of: service) }
    }
}
