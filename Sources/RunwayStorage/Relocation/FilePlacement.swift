import Foundation

/// Where a file belongs, and where older versions of the app may have left it.
///
/// Declaring placements lets ``FileRelocation`` move files written to the wrong role by an older
/// version (settings in Documents, say) to the right one, as Apple's guidance asks of an update.
public struct FilePlacement: Sendable, Hashable {
    /// A former location.
    public struct Location: Sendable, Hashable {
        public var role: ContainerRole
        public var path: String

        public init(_ role: ContainerRole, _ path: String) {
            self.role = role
            self.path = path
        }
    }

    /// The path inside ``role``.
    public var path: String
    /// The role the file belongs in.
    public var role: ContainerRole
    /// Whether the file is re-creatable and so kept out of backups.
    public var excludedFromBackup: Bool
    /// Where older versions may have put it, checked in order.
    public var formerLocations: [Location]

    public init(_ path: String, in role: ContainerRole, excludedFromBackup: Bool = false, formerLocations: [Location] = []) {
        self.path = path
        self.role = role
        self.excludedFromBackup = excludedFromBackup
        self.formerLocations = formerLocations
    }
}

/// Moves declared files from former locations into their right place.
///
/// Each move is a rename (atomic on one volume; across volumes a copy made atomic, then the source
/// removed), so there are never two live copies. When both the old and the right place hold the
/// file, the newer one wins and the other is removed. Running it again finds nothing to do.
public struct FileRelocation: Sendable {
    /// What relocation did for one file.
    public enum Outcome: Sendable, Hashable {
        /// Moved from a former location.
        case moved(from: FilePlacement.Location)
        /// Already in place; a stale copy at a former location was removed.
        case removedStaleCopy(at: FilePlacement.Location)
        /// Already in place, or not present anywhere.
        case nothingToDo
    }

    public let container: Container

    public init(container: Container) { self.container = container }

    /// Relocates every placement; returns what happened to each, in order.
    public func run(_ placements: [FilePlacement]) throws(StorageError) -> [Outcome] {
        var outcomes: [Outcome] = []
        for placement in placements {
            outcomes.append(try relocate(placement))
        }
        return outcomes
    }

    private func relocate(_ placement: FilePlacement) throws(StorageError) -> Outcome {
        let destination = try container.url(for: placement.path, in: placement.role)
        var outcome = Outcome.nothingToDo
        for former in placement.formerLocations {
            let source = container.layout.directory(for: former.role)
                .appendingPathComponent(try FileSystem.validatedComponents(former.path).joined(separator: "/"))
            guard FileSystem.exists(source), source.standardizedFileURL != destination.standardizedFileURL else { continue }
            if FileSystem.exists(destination) {
                if FileSystem.modificationDate(of: source) > FileSystem.modificationDate(of: destination) {
                    try move(source, to: destination)
                    outcome = .moved(from: former)
                } else {
                    try FileSystem.remove(source)
                    if outcome == .nothingToDo { outcome = .removedStaleCopy(at: former) }
                }
            } else {
                try move(source, to: destination)
                outcome = .moved(from: former)
            }
        }
        if placement.excludedFromBackup, FileSystem.exists(destination) {
            try BackupExclusion.exclude(destination)
        }
        return outcome
    }

    private func move(_ source: URL, to destination: URL) throws(StorageError) {
        do {
            try FileSystem.rename(source, to: destination)
        } catch {
            // Another volume: copy atomically into place, then remove the source.
            let data = try FileSystem.read(source)
            try AtomicFile.write(data, to: destination, capacity: SystemCapacity())
            try FileSystem.remove(source)
        }
        FileSystem.syncDirectory(destination.deletingLastPathComponent())
    }
}
