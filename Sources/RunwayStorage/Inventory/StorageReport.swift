import Foundation

/// What the app actually stores, per role: Apple's "record what your app stores" as an API.
public struct StorageReport: Sendable, Codable, Hashable {
    /// One file.
    public struct File: Sendable, Codable, Hashable {
        /// The path inside its role's directory.
        public var path: String
        /// Its size in bytes.
        public var bytes: Int64
        /// Whether a backup includes it.
        public var backedUp: Bool
    }

    /// One role's directory and files.
    public struct Role: Sendable, Codable, Hashable {
        public var role: ContainerRole
        public var directory: String
        public var files: [File]
        public var totalBytes: Int64
        public var backedUpBytes: Int64
    }

    public var roles: [Role]
    public var totalBytes: Int64
    public var backedUpBytes: Int64
    public var fileCount: Int

    /// Walks every role of `container`; nothing is created or changed.
    public init(container: Container) {
        var roles: [Role] = []
        for role in ContainerRole.allCases {
            let directory = container.layout.directory(for: role)
            var files: [File] = []
            // Documents may lie inside Application Support (Linux): each file is counted once.
            let nested = ContainerRole.allCases.filter { $0 != role }.map { container.layout.directory(for: $0).standardizedFileURL.path }
                .filter { $0.hasPrefix(directory.standardizedFileURL.path + "/") }
            if let walker = FileManager.default.enumerator(atPath: directory.path) {
                while let relative = walker.nextObject() as? String {
                    let url = directory.appendingPathComponent(relative)
                    if nested.contains(where: { url.standardizedFileURL.path == $0 || url.standardizedFileURL.path.hasPrefix($0 + "/") }) {
                        continue
                    }
                    guard !FileSystem.isDirectory(url), !BackupExclusion.isMarker(url.lastPathComponent) else { continue }
                    let backedUp = role.isBackedUp && !BackupExclusion.isExcluded(url, within: directory)
                    files.append(File(path: relative, bytes: FileSystem.size(of: url), backedUp: backedUp))
                }
            }
            files.sort { $0.path < $1.path }
            roles.append(
                Role(
                    role: role, directory: directory.path, files: files,
                    totalBytes: files.reduce(0) { $0 + $1.bytes },
                    backedUpBytes: files.filter(\.backedUp).reduce(0) { $0 + $1.bytes }))
        }
        self.roles = roles
        self.totalBytes = roles.reduce(0) { $0 + $1.totalBytes }
        self.backedUpBytes = roles.reduce(0) { $0 + $1.backedUpBytes }
        self.fileCount = roles.reduce(0) { $0 + $1.files.count }
    }

    /// The report as a table for people.
    public var text: String {
        var lines: [String] = []
        for role in roles {
            lines.append("\(role.role.rawValue) — \(role.directory)")
            if role.files.isEmpty { lines.append("  (empty)") }
            for file in role.files {
                lines.append("  \(file.backedUp ? "backed up  " : "not backed up") \(String(format: "%10lld", file.bytes)) B  \(file.path)")
            }
            lines.append("  total \(role.totalBytes) B, backed up \(role.backedUpBytes) B")
        }
        lines.append("All roles: \(fileCount) files, \(totalBytes) B, of which \(backedUpBytes) B backed up")
        return lines.joined(separator: "\n")
    }
}
