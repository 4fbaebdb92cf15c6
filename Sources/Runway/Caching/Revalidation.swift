import Foundation
import HTTPTypes

/// What a `304 Not Modified` does to a stored answer (RFC 9111 §4.3.4): the stored body stays,
/// and the 304's header fields replace the stored fields of the same names — the new `Date`,
/// `ETag`, `Cache-Control`, `Expires` give the entry its new freshness.
enum Revalidation {
    /// Fields a 304 never replaces: they describe the 304's own (empty) content, not the
    /// stored representation.
    static let kept: Set<HTTPField.Name> = [.contentLength, .contentEncoding, .contentRange, .transferEncoding, .contentType]

    /// The stored fields updated by `notModified`'s.
    static func merge(stored: HTTPFields, notModified: HTTPFields) -> HTTPFields {
        var replaced = Set<HTTPField.Name>()
        for field in notModified where !kept.contains(field.name) { replaced.insert(field.name) }
        var merged = HTTPFields()
        for field in stored where !replaced.contains(field.name) { merged.append(field) }
        for field in notModified where replaced.contains(field.name) { merged.append(field) }
        return merged
    }

    /// Whether `error` lets an entry stand in under stale-if-error (RFC 5861 §4): the server
    /// answered with a 5xx, or could not be reached or finish its answer.
    static func isServerFailure(_ error: RunwayError) -> Bool {
        switch error {
        case .httpStatus(let code, _): (500...599).contains(code)
        case .noNetwork, .connectionLost, .timeout: true
        default: false
        }
    }
}
