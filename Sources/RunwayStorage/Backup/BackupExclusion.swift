import Foundation

/// Keeps re-creatable files out of backups.
///
/// Apple platforms: the `isExcludedFromBackup` resource value, on files and folders alike.
///
/// Linux: a folder gets a `CACHEDIR.TAG` file (the Cache Directory Tagging specification), which
/// GNU tar (`--exclude-caches`), borg and restic honour. A single file is listed in its folder's
/// `.runway-nobackup` file, one name a line, which GNU tar honours with
/// `--exclude-ignore=.runway-nobackup`; tag a folder when every backup tool must skip it.
public enum BackupExclusion {
    /// The name of the cache directory tag.
    public static let tagFileName = "CACHEDIR.TAG"
    /// The name of the per-folder list of excluded files (Linux).
    public static let ignoreFileName = ".runway-nobackup"
    /// The signature the specification requires at the start of the tag.
    static let signature = "Signature: 8a477f597d28d172789f06886806bc55"
    static let tagContent = """
        \(signature)
        # This file is a cache directory tag created by Runway.
        # Backup tools that honour it skip this folder: it holds files the app can re-create.
        # For information about cache directory tags, see https://bford.info/cachedir/

        """

    /// Excludes the file or folder at `url` from backups; doing it again changes nothing.
    ///
    /// - parameter durable: On Linux, whether the marker is flushed to disk before this returns
    ///   (it is always written atomically). Pass `false` only where `url` is excluded again at
    ///   every opening, as Runway's own stores are: a marker a power cut lost or left short is
    ///   then written anew at the next opening, and a first launch does not wait for two `fsync`s
    ///   per folder.
    /// - throws: ``StorageError/notFound(_:)`` when nothing is there, or an I/O error.
    public static func exclude(_ url: URL, durable: Bool = true) throws(StorageError) {
        guard FileSystem.exists(url) else { throw .notFound(url.path) }
        #if canImport(Darwin)
        var target = url
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        do { try target.setResourceValues(values) } catch {
            throw .io(operation: "exclude from backup", path: url.path, reason: error.localizedDescription)
        }
        #else
        if FileSystem.isDirectory(url) {
            let tag = url.appendingPathComponent(tagFileName)
            guard !hasValidTag(url) else { return }
            try AtomicFile.write(Data(tagContent.utf8), to: tag, permissions: 0o644, capacity: nil, durable: durable)
        } else {
            let list = url.deletingLastPathComponent().appendingPathComponent(ignoreFileName)
            var names = excludedNames(in: url.deletingLastPathComponent())
            guard !names.contains(url.lastPathComponent) else { return }
            names.append(url.lastPathComponent)
            try AtomicFile.write(
                Data((names.joined(separator: "\n") + "\n").utf8), to: list, permissions: 0o644, capacity: nil, durable: durable)
        }
        #endif
    }

    /// Whether a backup skips `url`: excluded itself, or inside an excluded folder up to `root`.
    public static func isExcluded(_ url: URL, within root: URL? = nil) -> Bool {
        #if canImport(Darwin)
        var current = url
        while true {
            if (try? current.resourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup) == true {
                return true
            }
            if let root, current.standardizedFileURL.path == root.standardizedFileURL.path { return false }
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { return false }
            current = parent
        }
        #else
        if !FileSystem.isDirectory(url), excludedNames(in: url.deletingLastPathComponent()).contains(url.lastPathComponent) {
            return true
        }
        var current = FileSystem.isDirectory(url) ? url : url.deletingLastPathComponent()
        while true {
            if hasValidTag(current) { return true }
            if let root, current.standardizedFileURL.path == root.standardizedFileURL.path { return false }
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { return false }
            current = parent
        }
        #endif
    }

    /// Whether `directory` holds a tag that starts with the specification's signature.
    static func hasValidTag(_ directory: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: directory.appendingPathComponent(tagFileName).path) else {
            return false
        }
        defer { try? handle.close() }
        // A tag that cannot be read (a directory under its name) is no tag; Foundation's
        // readData(ofLength:) would trap on the error.
        guard let head = (try? handle.read(upToCount: signature.utf8.count)) ?? nil else { return false }
        return head == Data(signature.utf8)
    }

    static func excludedNames(in directory: URL) -> [String] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(ignoreFileName)) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    /// Whether `name` is one of the exclusion markers themselves.
    static func isMarker(_ name: String) -> Bool { name == tagFileName || name == ignoreFileName }
}
