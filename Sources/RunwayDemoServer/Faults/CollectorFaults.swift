import Hummingbird
import NIOConcurrencyHelpers
import RunwayServer

/// A collector that fails on purpose: middleware in front of the collector's routes that
/// answers chosen batches with a refusal instead of passing them on, for tests and the demo of
/// an unreliable collector. The production collector knows nothing of it.
public struct CollectorFaults: RouterMiddleware {
    public typealias Context = ServerRequestContext

    /// A refusal to answer instead of storing a batch.
    public enum Fault: Sendable, Hashable {
        /// 500 `injected_fault`.
        case serverError
        /// 429 `injected_fault` with `Retry-After` in seconds.
        case tooManyRequests(retryAfter: Int)
        /// 400 `injected_fault`: a batch called malformed.
        case badRequest
    }

    private let fault: @Sendable (Int) -> Fault?
    private let batches = NIOLockedValueBox(0)

    /// Faults chosen by `fault`: given the number of each batch posted (1 for the first), the
    /// refusal to answer with, if any.
    public init(_ fault: @escaping @Sendable (Int) -> Fault?) {
        self.fault = fault
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .post, request.uri.path.hasSuffix("/batches") else { return try await next(request, context) }
        let number = batches.withLockedValue { count -> Int in
            count += 1
            return count
        }
        switch fault(number) {
        case .serverError?:
            return Self.refusal(status: .internalServerError)
        case .badRequest?:
            return Self.refusal(status: .badRequest)
        case .tooManyRequests(let seconds)?:
            var response = Self.refusal(status: .tooManyRequests)
            response.headers[.retryAfter] = "\(seconds)"
            return response
        case nil:
            return try await next(request, context)
        }
    }

    /// The collector's refusal shape, with the reason `injected_fault`.
    static func refusal(status: HTTPResponse.Status) -> Response {
        JSONResponse.make(["code": Int(status.code), "reason": "injected_fault"], status: status)
    }
}
