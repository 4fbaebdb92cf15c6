import Foundation
import RunwayStorage

extension DemoChapter {
    /// What the demo wrote on the "device", where, and whether a backup would take it:
    /// each file in the right container directory with the right backup behaviour.
    static let storage = DemoChapter("storage", "Storage report (seed 002)") { context, log in
        await context.cache.waitForDiskWork()
        let report = await Self.report(of: context.container)
        for role in report.roles where !role.files.isEmpty {
            let backedUp = role.files.filter(\.backedUp).count
            log.say("\(role.role.rawValue): \(role.files.count) files, \(role.totalBytes) B, \(backedUp) backed up — "
                + role.files.prefix(3).map(\.path).joined(separator: ", ") + (role.files.count > 3 ? ", …" : ""))
        }
        log.say("in all: \(report.fileCount) files, \(report.totalBytes) B; \(report.backedUpBytes) B would go to a backup")
        log.figure("files", .int(report.fileCount))
        log.figure("bytes", .int(Int(report.totalBytes)))
        log.figure("backedUpBytes", .int(Int(report.backedUpBytes)))
        try log.require(report.fileCount > 0, "the demo wrote nothing to its container")
        try log.require(report.backedUpBytes == 0, "caches, queues and server lists must never go to a backup")
    }

    /// Walks the container off the main actor: it reads the file system.
    @concurrent
    nonisolated private static func report(of container: Container) async -> StorageReport {
        StorageReport(container: container)
    }
}
