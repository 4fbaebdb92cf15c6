extension JSON {
    /// Whether a string or key anywhere in the value holds a NUL character — what PostgreSQL's
    /// `jsonb` and most text columns cannot store, so the operation log refuses it on both ends.
    package var holdsNULCharacter: Bool {
        switch self {
        case .string(let text): return text.utf8.contains(0)
        case .array(let items): return items.contains { $0.holdsNULCharacter }
        case .object(let members): return members.contains { $0.key.utf8.contains(0) || $0.value.holdsNULCharacter }
        case .null, .bool, .int, .bigInteger, .double: return false
        }
    }
}
