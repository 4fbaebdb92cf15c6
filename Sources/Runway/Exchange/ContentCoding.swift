import Foundation
import HTTPTypes

/// The content codings of a response body (RFC 9110 §8.4): which the engine offers, and what a
/// head says once a transport has undone them.
///
/// Every transport undoes gzip and deflate (AsyncHTTPClient's decompressor, URLSession's own);
/// the engine offers exactly those when an API asks for none, so the rule is one for all of
/// them. A body that arrives in any other coding was never offered and no transport undid it:
/// the engine refuses it (``BodyCollector``) instead of handing on bytes that are not what
/// their content type says.
package enum ContentCoding {
    /// What the engine's requests offer in `Accept-Encoding`.
    package static let offered = "gzip, deflate"

    /// The codings every transport undoes (`x-gzip` is gzip's old name).
    static let undone: Set<String> = ["gzip", "x-gzip", "deflate"]

    /// The codings of `fields`' `Content-Encoding` that no transport undoes, lowercased, in
    /// order; `identity` is none.
    package static func notUndone(in fields: HTTPFields) -> [String] {
        guard let header = fields[.contentEncoding] else { return [] }
        return header.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" && !undone.contains($0) }
    }
}

extension HTTPFields {
    /// The fields of a response whose body a transport has content-decoded: when it was encoded
    /// on the wire in codings every transport undoes, its encoding and wire length no longer
    /// describe the body handed on, so both are dropped. A coding no transport undoes is kept,
    /// so that the engine sees it. Every transport hands on heads through this one rule.
    package func describingDecodedBody() -> HTTPFields {
        guard let encoding = self[.contentEncoding], encoding.lowercased() != "identity",
            ContentCoding.notUndone(in: self).isEmpty
        else { return self }
        var decoded = self
        decoded[.contentEncoding] = nil
        decoded[.contentLength] = nil
        return decoded
    }
}
