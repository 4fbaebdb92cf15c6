import Foundation

/// A folder of a test's own in the temporary folder, removed with everything in it: what a
/// test or its child process writes there (SQLite files and their `-wal` and `-shm`
/// companions included) does not outlive the test.
public struct ScratchFolder: Sendable {
    public let url: URL

    /// Makes a new, empty folder named `runway-<stem>-<UUID>`.
    public init(_ stem: String = "scratch") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-\(stem)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// `name` inside the folder.
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
