import Foundation
import Testing
@testable import RunwayStorage

@Suite("Backup exclusion", .timeLimit(.minutes(10)))
struct BackupExclusionTests {
    @Test("caches and temporary are always excluded; support files can be; GNU tar honours it all")
    func gnuTarHonoursExclusions() throws {
        let root = try TemporaryRoot()
        let container = root.container
        try AtomicFile.write(Data("doc".utf8), to: try container.url(for: "note.txt", in: .documents))
        try AtomicFile.write(Data("db".utf8), to: try container.url(for: "user.sqlite", in: .applicationSupport))
        let thumbnail = try container.url(for: "thumbnails/a.png", in: .applicationSupport)
        try AtomicFile.write(Data("png".utf8), to: thumbnail)
        try BackupExclusion.exclude(thumbnail.deletingLastPathComponent())  // a re-creatable folder
        let index = try container.url(for: "search-index.bin", in: .applicationSupport)
        try AtomicFile.write(Data("idx".utf8), to: index)
        try BackupExclusion.exclude(index)  // a single re-creatable file
        try BackupExclusion.exclude(index)  // idempotent
        try AtomicFile.write(Data("cached".utf8), to: try container.url(for: "http/response.json", in: .caches))
        try AtomicFile.write(Data("tmp".utf8), to: try container.url(for: "upload.part", in: .temporary))

        #if os(Linux)
        let archive = root.url.appendingPathComponent("backup.tar").path
        _ = try run(
            "/usr/bin/tar",
            ["--exclude-caches", "--exclude-ignore=\(BackupExclusion.ignoreFileName)", "-cf", archive, "-C", root.url.path,
             "Documents", "Library", "tmp"])
        let listing = try run("/usr/bin/tar", ["-tf", archive]).split(separator: "\n").map(String.init)
        #expect(listing.contains("Documents/note.txt"))
        #expect(listing.contains("Library/Application Support/user.sqlite"))
        #expect(!listing.contains { $0.contains("search-index.bin") })
        #expect(!listing.contains { $0.contains("thumbnails/a.png") })
        #expect(!listing.contains { $0.contains("response.json") })
        #expect(!listing.contains { $0.contains("upload.part") })
        #endif
        #expect(BackupExclusion.isExcluded(index))
        #expect(BackupExclusion.isExcluded(thumbnail))
        #expect(!BackupExclusion.isExcluded(try container.url(for: "user.sqlite", in: .applicationSupport), within: try container.directory(for: .applicationSupport)))
    }

    #if os(Linux)
    /// A container's caches folder is tagged without a flush (a first launch need not wait for
    /// the disk): a tag a power cut cut short is put right the next time the folder is opened.
    @Test("a caches tag left empty is written anew when the folder is next opened")
    func damagedTagIsRewritten() throws {
        let root = try TemporaryRoot()
        let container = root.container
        let caches = try container.directory(for: .caches)
        let tag = caches.appendingPathComponent(BackupExclusion.tagFileName)
        #expect(BackupExclusion.hasValidTag(caches))
        try Data().write(to: tag)  // what a file renamed before its bytes reached the disk may look like
        #expect(!BackupExclusion.isExcluded(caches))
        _ = try container.url(for: "http/response.json", in: .caches)
        #expect(BackupExclusion.hasValidTag(caches))
        #expect(BackupExclusion.isExcluded(caches))
    }

    @Test("a folder where the tag should be is no tag: read without a trap, and tagging it is a typed error")
    func tagThatIsAFolder() throws {
        let root = try TemporaryRoot()
        let folder = root.url.appendingPathComponent("odd")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(BackupExclusion.tagFileName), withIntermediateDirectories: true)
        #expect(!BackupExclusion.hasValidTag(folder))
        #expect(!BackupExclusion.isExcluded(folder))
        #expect(throws: StorageError.self) { try BackupExclusion.exclude(folder) }
    }
    #endif

    @Test("excluding something that does not exist is a clear error")
    func missing() throws {
        let root = try TemporaryRoot()
        let ghost = root.url.appendingPathComponent("ghost")
        #expect(throws: StorageError.notFound(ghost.path)) { try BackupExclusion.exclude(ghost) }
    }
}
