import Foundation

/// Where documents handed to the app by other programs land (AirDrop, "Open in…", a drag).
///
/// Received files are copied into `Documents/Inbox` and made read-only: the app may read them
/// but not change them there. Opening one for editing moves it into `Documents` first. Only
/// declared ``DocumentType``s are accepted; anything else is refused with a clear error.
///
/// For example:
///
/// ```swift
/// let inbox = Inbox(container: container, accepting: [.pdf, .plainText])
/// let received = try inbox.receive(incomingURL)
/// let editable = try inbox.openForEditing(received)
/// ```
public struct Inbox: Sendable {
    /// The folder name inside Documents.
    public static let folderName = "Inbox"

    public let container: Container
    /// The types accepted.
    public let acceptedTypes: [DocumentType]

    public init(container: Container, accepting acceptedTypes: [DocumentType]) {
        self.container = container
        self.acceptedTypes = acceptedTypes
    }

    /// The inbox folder, created (read-only) on demand.
    public func directory() throws(StorageError) -> URL {
        let url = try container.directory(for: .documents).appendingPathComponent(Self.folderName, isDirectory: true)
        try FileSystem.createDirectory(url, permissions: 0o555)
        return url
    }

    /// Accepts the file at `source` into the inbox, read-only.
    ///
    /// - returns: The file's URL in the inbox (a numbered name if the name is taken).
    /// - throws: ``StorageError/unsupportedContentType(path:reason:)`` for an undeclared type or a
    ///   file whose bytes do not match its extension; ``StorageError/notFound(_:)``.
    public func receive(_ source: URL) throws(StorageError) -> URL {
        let data = try FileSystem.read(source)
        guard acceptedTypes.contains(where: { $0.matches(source, head: data.prefix(16)) }) else {
            let declared = acceptedTypes.map(\.identifier).joined(separator: ", ")
            throw .unsupportedContentType(
                path: source.lastPathComponent, reason: "not one of the accepted types (\(declared))")
        }
        let inbox = try directory()
        let destination = Self.freeName(for: source.lastPathComponent, in: inbox)
        try FileSystem.setPermissions(inbox, 0o755)
        defer { try? FileSystem.setPermissions(inbox, 0o555) }
        try AtomicFile.write(data, to: destination, permissions: 0o444)
        return destination
    }

    /// The files waiting in the inbox.
    public func contents() throws(StorageError) -> [URL] {
        let inbox = try directory()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []
        return names.sorted().map { inbox.appendingPathComponent($0) }
    }

    /// Moves an inbox file into Documents and makes it writable, for editing.
    ///
    /// - throws: ``StorageError/invalidPath(_:)`` when `file` is not in the inbox.
    public func openForEditing(_ file: URL) throws(StorageError) -> URL {
        let inbox = try directory()
        guard file.deletingLastPathComponent().standardizedFileURL.path == inbox.standardizedFileURL.path else {
            throw .invalidPath(file.path)
        }
        guard FileSystem.exists(file) else { throw .notFound(file.path) }
        let documents = try container.directory(for: .documents)
        let destination = Self.freeName(for: file.lastPathComponent, in: documents)
        try FileSystem.setPermissions(inbox, 0o755)
        defer { try? FileSystem.setPermissions(inbox, 0o555) }
        try FileSystem.rename(file, to: destination)
        try FileSystem.setPermissions(destination, 0o644)
        return destination
    }

    /// `name`, or `name 2`, `name 3`… when taken.
    static func freeName(for name: String, in directory: URL) -> URL {
        var candidate = directory.appendingPathComponent(name)
        let stem = (name as NSString).deletingPathExtension
        let ext = (name as NSString).pathExtension
        var number = 2
        while FileSystem.exists(candidate) {
            candidate = directory.appendingPathComponent(ext.isEmpty ? "\(stem) \(number)" : "\(stem) \(number).\(ext)")
            number += 1
        }
        return candidate
    }
}
