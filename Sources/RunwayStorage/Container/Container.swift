import Foundation

/// The app's storage container: a directory per ``ContainerRole``, created on demand with the
/// right permissions and backup behaviour.
///
/// For example:
///
/// ```swift
/// let container = Container(.system(appName: "com.acme.todolist"))
/// let settings = try container.url(for: "settings.json", in: .applicationSupport)
/// try AtomicFile.write(data, to: settings)
/// ```
public struct Container: Sendable, Hashable {
    /// How roles map to directories.
    public let layout: ContainerLayout

    /// Creates a container over `layout`.
    public init(_ layout: ContainerLayout) { self.layout = layout }

    /// A container below an explicit root: for tests and sandboxes.
    public init(root: URL) { self.layout = .root(root) }

    /// The directory of `role`, created if missing: private roles 0700, and the caches and
    /// temporary directories tagged as excluded from backups.
    ///
    /// On Linux the system layout's temporary directory lies in a folder every local user shares
    /// (unless `$XDG_RUNTIME_DIR` is set): it is used only when it is a real directory (not a
    /// link), owned by this user, with mode 0700.
    ///
    /// - throws: ``StorageError/io(operation:path:reason:)`` when it cannot be created;
    ///   ``StorageError/untrustedDirectory(path:reason:)`` when the temporary directory someone
    ///   else made first is not this user's private one.
    public func directory(for role: ContainerRole) throws(StorageError) -> URL {
        let url = layout.directory(for: role)
        try FileSystem.createDirectory(url, permissions: role.isPrivate ? 0o700 : 0o755)
        #if os(Linux)
        if role == .temporary, case .system = layout { try FileSystem.verifyPrivateDirectory(url) }
        #endif
        if !role.isBackedUp {
            // Checked at every call, and written again when missing: no flush needed.
            try BackupExclusion.exclude(url, durable: false)
        }
        return url
    }

    /// The URL of `path` inside `role`, its parent folders created.
    ///
    /// - parameters:
    ///   - path: A relative path such as `"db/cache.sqlite"`; it may not be absolute or climb
    ///     out with `..`.
    ///   - role: The role whose directory holds it.
    /// - throws: ``StorageError/invalidPath(_:)`` for such a path; I/O errors as above.
    public func url(for path: String, in role: ContainerRole) throws(StorageError) -> URL {
        let components = try FileSystem.validatedComponents(path)
        var url = try directory(for: role)
        for (index, component) in components.enumerated() {
            url.appendPathComponent(component, isDirectory: index < components.count - 1)
        }
        try FileSystem.createDirectory(url.deletingLastPathComponent(), permissions: role.isPrivate ? 0o700 : 0o755)
        return url
    }

    /// The role whose directory holds `url`, if any.
    public func role(containing url: URL) -> ContainerRole? {
        let path = url.standardizedFileURL.path
        // Longest directory first: documents may lie inside application support on Linux.
        let candidates = ContainerRole.allCases.map { ($0, layout.directory(for: $0).standardizedFileURL.path) }
            .sorted { $0.1.count > $1.1.count }
        return candidates.first { path == $0.1 || path.hasPrefix($0.1 + "/") }?.0
    }
}
