package import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, read as `self[name]` reads it — every such field's
    /// value in order, joined by `", "` (`"; "` for `Cookie`), `nil` when there is none — without
    /// the subscript's join over a lazy sequence, which is generic across modules and so looks
    /// up type metadata at every read, even of a single field. Every load reads a few of a
    /// response's fields (`Content-Length`, `Content-Encoding`, `Location`, `Retry-After`).
    package func value(of name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if let earlier = found {
                found = earlier + (name == .cookie ? "; " : ", ") + field.value
            } else {
                found = field.value
            }
        }
        return found
    }
}
