import Foundation
import HTTPTypes
import Runway

/// The `API` one call of a generated operation becomes: named by its `operationID` (the name
/// in logs, metrics, HAR files, cache keys and `StubTransport` samples), with the path, method
/// and header fields the generated code made, and its ``OperationPolicy``.
///
/// The generated code has already encoded everything: the answer is taken raw (the generated
/// code parses it), the query travels as params (so that cache and flight keys see it), and the
/// body as the bytes it wrote.
struct OperationAPI: API {
    let name: String
    let service: ServiceID
    let path: String
    let method: HTTPRequest.Method
    let headers: HTTPFields
    let policy: OperationPolicy

    var paramEncoding: ParamEncoding { .query }
    var responseFormat: ResponseFormat { .raw }
    var timeout: Duration { policy.timeout }
    var totalTimeout: Duration? { policy.totalTimeout }
    var retryPolicy: RetryPolicy { policy.retryPolicy }
    var cachePolicy: CachePolicy { policy.cachePolicy }
    var requestStrategy: RequestStrategy { policy.requestStrategy }
    var sharesIdenticalLoads: Bool { policy.sharesIdenticalLoads }
    var authenticates: Bool { policy.authenticates }
    var maximumResponseSize: Int { policy.maximumResponseSize }
    var interceptors: [any Interceptor] { policy.interceptors }
    var adapters: [any RequestAdapter] { policy.adapters }
}

/// The parts of a generated request that Runway builds again: the path, the query as params.
struct OperationTarget {
    var path: String
    var params: Parameters

    /// Splits `target` (`/listings/esf?page=2&tag=a&tag=b`) into its path and its query's
    /// pairs, percent-decoded; a repeated name becomes an array, as Runway writes it again
    /// (`tag=a&tag=b`).
    ///
    /// - throws: `RunwayError/invalidRequest(reason:)` for a malformed percent-escape.
    init(_ target: String) throws(RunwayError) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts.first.map(String.init) ?? "/"
        params = [:]
        guard parts.count == 2 else { return }
        for pair in parts[1].split(separator: "&") {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = halves.first.flatMap({ String($0).removingPercentEncoding }),
                let value = (halves.count == 2 ? String(halves[1]) : "").removingPercentEncoding
            else {
                throw .invalidRequest(reason: "the query pair \"\(pair)\" has a malformed percent-escape")
            }
            switch params[name] {
            case nil: params[name] = .string(value)
            case .array(let values)?: params[name] = .array(values + [.string(value)])
            case let single?: params[name] = .array([single, .string(value)])
            }
        }
    }
}
