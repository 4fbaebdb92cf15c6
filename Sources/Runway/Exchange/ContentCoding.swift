import Foundation
import HTTPTypes

/// The content codings of a response body (RFC 9110 §8.4): which the engine offers, and what a
/// head says once a transport has undone them.
///
/// gzip and deflate are always undone — by the engine (``DecodingSink``), or by a transport
/// that cannot help undoing them (URLSession); the engine offers exactly those when an API asks
/// for none, so the rule is one for all transports. A body that arrives in any other coding was
/// never offered and nothing undid it: the engine refuses it (``BodyCollector``) instead of
/// handing on bytes that are not what their content type says.
package enum ContentCoding {
    /// What the engine's requests offer in `Accept-Encoding`.
    package static let offered = "gzip, deflate"

    /// The codings that are always undone (`x-gzip` is gzip's old name).
    static let undone: Set<String> = ["gzip", "x-gzip", "deflate"]

    /// The codings `fields`' `Content-Encoding` names, lowercased, in the order they were
    /// applied; `identity` is none.
    static func codings(in fields: HTTPFields) -> [String] {
        guard let header = fields.value(of: .contentEncoding) else { return [] }
        return header.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
    }

    /// The codings of `fields`' `Content-Encoding` that nothing undoes, in order.
    package static func notUndone(in fields: HTTPFields) -> [String] {
        codings(in: fields).filter { !undone.contains($0) }
    }
}

extension HTTPFields {
    /// The fields of a response as the engine hands it on, its body content-decoded: when it was
    /// encoded on the wire in codings that are always undone, its encoding and wire length no
    /// longer describe the body, so both are dropped. A coding nothing undoes is kept, so that
    /// the collector refuses it. Every head passes through this one rule (``DecodingSink``).
    package func describingDecodedBody() -> HTTPFields {
        guard let encoding = self.value(of: .contentEncoding), encoding.lowercased() != "identity",
            ContentCoding.notUndone(in: self).isEmpty
        else { return self }
        var decoded = self
        decoded[.contentEncoding] = nil
        decoded[.contentLength] = nil
        return decoded
    }
}
