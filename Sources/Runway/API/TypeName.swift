/// Module-qualified type names, worked out once per type.
///
/// `String(reflecting:)` builds its text afresh on every call (several allocations), and the
/// engine asks for an API's ``API/name`` several times per load: for signing, the transport, the
/// log line.
enum TypeName {
    private static let names = Locked<[ObjectIdentifier: String]>([:])

    /// `String(reflecting: type)`, from the table after the first call.
    static func of(_ type: Any.Type) -> String {
        let id = ObjectIdentifier(type)
        if let name = names.withLock({ $0[id] }) { return name }
        let name = String(reflecting: type)
        names.withLock { $0[id] = name }
        return name
    }
}
