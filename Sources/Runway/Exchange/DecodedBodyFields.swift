import HTTPTypes

extension HTTPFields {
    /// The fields of a response whose body a transport has already content-decoded: when it was
    /// encoded on the wire, its encoding and wire length no longer describe the body handed on,
    /// so both are dropped. Every transport hands on heads through this one rule.
    package func describingDecodedBody() -> HTTPFields {
        guard let encoding = self[.contentEncoding], encoding.lowercased() != "identity" else { return self }
        var decoded = self
        decoded[.contentEncoding] = nil
        decoded[.contentLength] = nil
        return decoded
    }
}
