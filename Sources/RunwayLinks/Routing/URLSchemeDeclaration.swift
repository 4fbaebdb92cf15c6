/// The schemes an app answers, under a reverse-DNS name: the `CFBundleURLTypes` entry of an
/// Apple app, and what `runway links install` registers on Linux.
///
/// For example: `URLSchemeDeclaration(name: "com.acme.todolist", schemes: ["todolist"])`.
public struct URLSchemeDeclaration: Sendable, Hashable {
    /// A reverse-DNS name that identifies the declaration (`CFBundleURLName`).
    public let name: String
    /// The schemes, lowercased (`CFBundleURLSchemes`).
    public let schemes: Set<String>

    public init(name: String, schemes: Set<String>) {
        self.name = name
        self.schemes = Set(schemes.map { $0.lowercased() })
    }
}
