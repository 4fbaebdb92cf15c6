import HTTPTypes

/// Takes the credentials out of a request before app code sees it (``RawResponse/request``,
/// delegates, interceptors, anything an app dumps or logs): the field stays, so the request is
/// still named and readable, but its value is ``placeholder``.
enum CredentialRedaction {
    /// What a redacted field's value reads.
    static let placeholder = "<redacted>"

    /// Fields that carry who is asking whatever set them: credentials, cookies, the request's
    /// signature and a temporary AWS session token.
    static let alwaysRedacted: Set<HTTPField.Name> = Set(
        [.authorization, .proxyAuthorization, .cookie, RequestSignature.Field.signature]
            + ["X-Amz-Security-Token"].compactMap { HTTPField.Name($0) })

    /// `request` with every field in ``alwaysRedacted`` or in `names` (those an
    /// ``Authenticator`` set) redacted.
    static func redacting(_ request: HTTPRequest, also names: Set<HTTPField.Name>) -> HTTPRequest {
        // Most requests carry nothing to redact: they are handed on as they are, uncopied.
        guard request.headerFields.contains(where: { alwaysRedacted.contains($0.name) || names.contains($0.name) }) else {
            return request
        }
        var redacted = request
        var fields = HTTPFields()
        for field in request.headerFields {
            let secret = alwaysRedacted.contains(field.name) || names.contains(field.name)
            fields.append(secret ? HTTPField(name: field.name, value: placeholder) : field)
        }
        redacted.headerFields = fields
        return redacted
    }

    /// The fields whose values differ between `before` and `after`: what an authenticator's
    /// `apply` set, under whatever names it chose.
    static func changedNames(from before: HTTPFields, to after: HTTPFields) -> Set<HTTPField.Name> {
        Set(after.map(\.name).filter { before[values: $0] != after[values: $0] })
    }
}
