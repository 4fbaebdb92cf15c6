import Foundation
import HTTPTypes

/// An outbox item's request as stored: everything of the API that shapes the request, so that a
/// relaunch sends what the app asked for without the API's type. What runs at send time is the
/// service's: its credential, signer, adapters, interceptors and error handler.
struct OutboxRequest: Sendable, Hashable {
    var service: ServiceID
    var method: HTTPRequest.Method
    var path: String
    var name: String
    var encoding: ParamEncoding
    var headers: HTTPFields
    var timeout: Duration
    var params: Parameters
    var body: Data?
    var contentType: String?

    /// The bytes the item costs against ``Outbox/Policy/maximumBytes``.
    var size: Int { ((try? JSON.object(params).encoded().count) ?? 0) + (body?.count ?? 0) }

    static func encodingName(_ encoding: ParamEncoding) -> String {
        switch encoding {
        case .automatic: "automatic"
        case .query: "query"
        case .json: "json"
        case .form: "form"
        }
    }

    static func encoding(named name: String) -> ParamEncoding? {
        switch name {
        case "automatic": .automatic
        case "query": .query
        case "json": .json
        case "form": .form
        default: nil
        }
    }

    /// The header fields as stored: a JSON array of `[name, value]` pairs, in order.
    static func storedHeaders(_ fields: HTTPFields) -> Data {
        let pairs = fields.map { JSON.array([.string($0.name.rawName), .string($0.value)]) }
        return (try? JSON.array(pairs).encoded()) ?? Data("[]".utf8)
    }

    static func headers(stored: Data) -> HTTPFields? {
        guard let pairs = (try? JSON(parsing: stored))?.arrayValue else { return nil }
        var fields = HTTPFields()
        for pair in pairs {
            guard let raw = pair[0]?.stringValue, let name = HTTPField.Name(raw), let value = pair[1]?.stringValue else {
                return nil
            }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }
}

/// One try of an outbox item: its stored request with its `Idempotency-Key`.
struct OutboxAPI: API {
    var request: OutboxRequest
    var key: String
    var retryPolicy: RetryPolicy

    var service: ServiceID { request.service }
    var path: String { request.path }
    var method: HTTPRequest.Method { request.method }
    var name: String { request.name }
    var paramEncoding: ParamEncoding { request.encoding }
    var timeout: Duration { request.timeout }
    var responseFormat: ResponseFormat { .raw }
    var cachePolicy: CachePolicy { .none }
    var sharesIdenticalLoads: Bool { false }

    var headers: HTTPFields {
        var fields = request.headers
        fields[HTTPField.Name.idempotencyKey] = key
        return fields
    }
}
