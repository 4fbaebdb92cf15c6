/// Module-qualified type names that stay the same from launch to launch, worked out once per
/// type.
///
/// `String(reflecting:)` names a `private` type, or one declared inside a function, with the
/// address of its context: `Module.(unknown context at $5589e8f69fc4).ProfileAPI`. The address
/// moves on every launch, and an API's name is part of its cache keys, stub lookups, log lines
/// and metric labels — so such an API would never hit its disk cache after a relaunch, and its
/// metrics would get a new label each launch. The runtime keeps nothing stable about such a
/// context (the mangled name holds the same address), so the anonymous contexts are left out:
/// `Module.ProfileAPI`. Two types that then read the same (two `private` `ProfileAPI`s in two
/// files of one module) are told apart by ``ambiguousName(of:)``, and the engine refuses to load
/// either under that name rather than let them share cache entries. Across launches no such
/// check is possible — launch 1 may use one of them, launch 2 the other — so an API of such a
/// type keeps its answers in memory only unless it names itself (``dependsOnLaunch(_:)``).
///
/// (`String(reflecting:)` also builds its text afresh on every call, and the engine asks for an
/// API's ``API/name`` several times per load. The name is read with `_typeName(_:qualified:)`,
/// the runtime's name of a type, which is what `String(reflecting:)` prints for one: the latter
/// first asks whether the metatype is `CustomDebugStringConvertible`, `CustomStringConvertible`
/// or `TextOutputStreamable` — on Linux a search of every conformance in the process for each,
/// the first time, paid on an app's first load.)
enum TypeName {
    private struct Table {
        var names: [ObjectIdentifier: String] = [:]
        /// Which type first took each name that had an anonymous context left out of it.
        var owners: [String: ObjectIdentifier] = [:]
        /// Names that two such types share.
        var shared: Set<String> = []
    }

    private static let table = Locked(Table())

    /// The type's module-qualified name, without the launch-dependent anonymous contexts.
    static func of(_ type: Any.Type) -> String {
        let id = ObjectIdentifier(type)
        if let name = table.withLock({ $0.names[id] }) { return name }
        let reflected = _typeName(type, qualified: true)
        let name = stable(reflected)
        table.withLock { table in
            table.names[id] = name
            guard name != reflected else { return }
            if let owner = table.owners[name], owner != id {
                table.shared.insert(name)
            } else {
                table.owners[name] = id
            }
        }
        return name
    }

    /// The type's default name when another `private` or local type has the same one; `nil`
    /// when the name is its own.
    static func ambiguousName(of type: Any.Type) -> String? {
        let name = of(type)
        return table.withLock { $0.shared.contains(name) } ? name : nil
    }

    /// Whether `api` goes by the default name of a `private` or function-local type: a name
    /// another such type may read the same in another launch, where the in-process check cannot
    /// see it. Its disk-cache entries could be read by that other type, so the engine keeps its
    /// answers in memory only.
    static func dependsOnLaunch(_ api: some API) -> Bool {
        let type = APISnapshot.identity(of: api)
        let name = of(type)
        return name != _typeName(type, qualified: true) && api.name == name
    }

    /// `reflected` without its `(unknown context at $…).` components.
    static func stable(_ reflected: String) -> String {
        let marker = "(unknown context at $"
        guard reflected.contains(marker) else { return reflected }
        var result = ""
        var rest = Substring(reflected)
        while let start = rest.range(of: marker) {
            result += rest[..<start.lowerBound]
            rest = rest[start.upperBound...]
            guard let close = rest.firstIndex(of: ")") else { break }
            rest = rest[rest.index(after: close)...]
            if rest.hasPrefix(".") { rest = rest.dropFirst() }
        }
        result += rest
        return result
    }
}
