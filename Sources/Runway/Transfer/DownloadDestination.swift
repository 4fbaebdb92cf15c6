public import Foundation
public import RunwayStorage

/// Where a download's file goes: the caches or the temporary role of a `Container`, the
/// places for data the app can fetch again (neither is backed up).
///
/// While it downloads, the file is `<name>.part` beside the destination (with a small
/// `<name>.part.resume` note of the server's validator), so an interrupted download resumes with
/// `Range` where the server allows it; the destination appears only once it is complete.
public struct DownloadDestination: Sendable {
    let container: Container
    let role: ContainerRole
    let path: String

    /// `path` inside the caches role: files the system may purge, fetched again when missing.
    public static func caches(_ path: String, in container: Container) -> DownloadDestination {
        DownloadDestination(container: container, role: .caches, path: path)
    }

    /// `path` inside the temporary role: files used once and then deleted.
    public static func temporary(_ path: String, in container: Container) -> DownloadDestination {
        DownloadDestination(container: container, role: .temporary, path: path)
    }

    /// The destination's URL, its folders created.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` for a path that is absolute or climbs
    ///   out of the role, or a folder that cannot be created.
    public func url() throws(RunwayError) -> URL {
        do {
            return try container.url(for: path, in: role)
        } catch {
            throw .invalidRequest(reason: "download destination \"\(path)\": \(error)")
        }
    }
}
