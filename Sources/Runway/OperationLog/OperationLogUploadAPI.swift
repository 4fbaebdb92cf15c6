import Foundation
import HTTPTypes

/// The upload of one batch: a `POST` of gzip-compressed JSON with the batch's idempotency key.
///
/// The key is the batch's, made when the batch was claimed and kept until the collector
/// acknowledged it; so the engine may retry the `POST` (the collector stores each event once
/// anyway, by its id).
struct OperationLogUploadAPI: API {
    var service: ServiceID
    var path: String
    var method: HTTPRequest.Method { .post }
    var name: String { "OperationLogUpload" }
    var batchKey: String
    var timeout: Duration
    var retryPolicy: RetryPolicy
    var responseFormat: ResponseFormat { .raw }
    var cachePolicy: CachePolicy { .none }

    var headers: HTTPFields {
        var fields = HTTPFields()
        fields[.contentEncoding] = "gzip"
        fields[.idempotencyKey] = batchKey
        return fields
    }
}
