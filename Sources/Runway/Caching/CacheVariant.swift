import HTTPTypes

/// A response's `Vary` (RFC 9111 §4.1): the request fields it was chosen by, and their values
/// in the request that fetched it. An entry answers a later request only when that request
/// has the same values; `Vary: *` is never reused, so it is never stored.
enum CacheVariant {
    /// What a `Vary` names.
    enum Names: Equatable {
        /// No `Vary`: any request matches.
        case none
        /// The listed fields, lowercased and sorted.
        case fields([String])
        /// `Vary: *`: the answer depends on more than the request's fields.
        case any
    }

    static func names(in headers: HTTPFields) -> Names {
        var names: [String] = []
        for value in headers[values: .vary] {
            for part in value.split(separator: ",") {
                let name = part.trimmingCharacters(in: .whitespaces).lowercased()
                if name == "*" { return .any }
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        return names.isEmpty ? .none : .fields(names.sorted())
    }

    /// The text an entry keeps of the request's values of the fields its response varies on
    /// (`nil` without `Vary`), compared with a later request's.
    static func text(for names: Names, request fields: HTTPFields) -> String? {
        guard case .fields(let list) = names else { return nil }
        return list.map { name in
            let values = HTTPField.Name(name).map { fields[values: $0] } ?? []
            return "\(name.utf8.count):\(name)=\(values.joined(separator: ","))"
        }.joined(separator: "\n")
    }

    /// Whether an entry stored with `stored` (its ``text(for:request:)``) and response fields
    /// `headers` answers a request with `fields`.
    static func matches(stored: String?, headers: HTTPFields, request fields: HTTPFields) -> Bool {
        let names = names(in: headers)
        if names == .any { return false }
        return text(for: names, request: fields) == stored
    }
}
