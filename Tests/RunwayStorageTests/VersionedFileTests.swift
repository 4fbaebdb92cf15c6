import Foundation
import Testing
@testable import RunwayStorage

@Suite("Versioned file formats and migrations", .timeLimit(.minutes(10)))
struct VersionedFileTests {
    struct SettingsV1: Codable { var name: String }
    struct SettingsV2: Codable { var firstName: String; var lastName: String }
    struct SettingsV3: Codable, Equatable { var firstName: String; var lastName: String; var theme: String }

    static let format = FileFormat(name: "settings", version: 3, migrations: [
        1: { data in
            let old = try JSONDecoder().decode(SettingsV1.self, from: data)
            let parts = old.name.split(separator: " ", maxSplits: 1).map(String.init)
            return try JSONEncoder().encode(SettingsV2(firstName: parts.first ?? "", lastName: parts.count > 1 ? parts[1] : ""))
        },
        2: { data in
            let old = try JSONDecoder().decode(SettingsV2.self, from: data)
            return try JSONEncoder().encode(SettingsV3(firstName: old.firstName, lastName: old.lastName, theme: "light"))
        },
    ])

    func file(in root: TemporaryRoot) throws -> VersionedFile {
        VersionedFile(url: try root.container.url(for: "settings.json", in: .applicationSupport), format: Self.format)
    }

    @Test("a v1 file is migrated v1→v2→v3 on read and rewritten as v3")
    func migrationChain() throws {
        let root = try TemporaryRoot()
        let file = try file(in: root)
        try AtomicFile.write(
            VersionedFile.encode(try JSONEncoder().encode(SettingsV1(name: "Ada Lovelace")), format: "settings", version: 1),
            to: file.url)
        #expect(try file.storedVersion() == 1)
        let settings = try file.read(SettingsV3.self)
        #expect(settings == SettingsV3(firstName: "Ada", lastName: "Lovelace", theme: "light"))
        #expect(try file.storedVersion() == 3)
        #expect(try file.read(SettingsV3.self) == settings, "reading again needs no migration")
    }

    @Test("a newer version is refused and the file is left untouched")
    func newerRefused() throws {
        let root = try TemporaryRoot()
        let file = try file(in: root)
        let bytes = VersionedFile.encode(Data("{}".utf8), format: "settings", version: 4)
        try AtomicFile.write(bytes, to: file.url)
        #expect(throws: StorageError.unsupportedVersion(format: "settings", found: 4, newest: 3)) { try file.read() }
        #expect(try Data(contentsOf: file.url) == bytes)
    }

    @Test("a corrupt or truncated envelope is a clear error, never a crash", arguments: [
        Data(), Data("no header at all".utf8), Data("{\"format\":\"settings\"\n{}".utf8), Data([0xFF, 0x00, 0x0A]),
        Data("{\"format\":\"settings\",\"version\":0}\n{}".utf8),
    ])
    func corrupt(_ bytes: Data) throws {
        let root = try TemporaryRoot()
        let file = try file(in: root)
        try AtomicFile.write(bytes, to: file.url)
        #expect { try file.read() } throws: { error in
            guard case .corrupt = error as? StorageError else { return false }
            return true
        }
        #expect(try Data(contentsOf: file.url) == bytes)
    }

    @Test("a failing migration leaves the file untouched; another format is refused")
    func failuresLeaveFile() throws {
        let root = try TemporaryRoot()
        let file = try file(in: root)
        let bytes = VersionedFile.encode(Data("not json".utf8), format: "settings", version: 1)
        try AtomicFile.write(bytes, to: file.url)
        #expect { try file.read() } throws: { error in
            guard case .migrationFailed(_, 1, _) = error as? StorageError else { return false }
            return true
        }
        #expect(try Data(contentsOf: file.url) == bytes)
        try AtomicFile.write(VersionedFile.encode(Data(), format: "bookmarks", version: 1), to: file.url)
        #expect(throws: StorageError.formatMismatch(expected: "settings", found: "bookmarks")) { try file.read() }
        #expect(throws: StorageError.notFound(root.url.appendingPathComponent("nope").path)) {
            try VersionedFile(url: root.url.appendingPathComponent("nope"), format: Self.format).read()
        }
    }

    @Test("a gap in the migrations is reported")
    func missingMigration() throws {
        let root = try TemporaryRoot()
        let gappy = VersionedFile(
            url: try root.container.url(for: "g.bin", in: .applicationSupport),
            format: FileFormat(name: "g", version: 3, migrations: [1: { $0 }]))
        try AtomicFile.write(VersionedFile.encode(Data(), format: "g", version: 1), to: gappy.url)
        #expect(throws: StorageError.missingMigration(format: "g", from: 2)) { try gappy.read() }
    }
}

@Suite("Relocation of files to their right place", .timeLimit(.minutes(10)))
struct RelocationTests {
    @Test("a file left in the wrong role is moved, once; running again does nothing")
    func moves() throws {
        let root = try TemporaryRoot()
        let container = root.container
        let old = try container.url(for: "settings.plist", in: .documents)
        try AtomicFile.write(Data("v".utf8), to: old)
        let placement = FilePlacement(
            "settings.plist", in: .applicationSupport, formerLocations: [.init(.documents, "settings.plist")])
        let relocation = FileRelocation(container: container)
        #expect(try relocation.run([placement]) == [.moved(from: .init(.documents, "settings.plist"))])
        #expect(!FileSystem.exists(old))
        #expect(try Data(contentsOf: try container.url(for: "settings.plist", in: .applicationSupport)) == Data("v".utf8))
        #expect(try relocation.run([placement]) == [.nothingToDo])
    }

    @Test("when both places hold the file, the newer wins and only one copy remains")
    func bothPresent() throws {
        let root = try TemporaryRoot()
        let container = root.container
        let right = try container.url(for: "thumbs.db", in: .caches)
        let stale = try container.url(for: "thumbs.db", in: .applicationSupport)
        try AtomicFile.write(Data("newer".utf8), to: right)
        try AtomicFile.write(Data("older".utf8), to: stale)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stale.path)
        let outcomes = try FileRelocation(container: container).run([
            FilePlacement("thumbs.db", in: .caches, formerLocations: [.init(.applicationSupport, "thumbs.db")])
        ])
        #expect(outcomes == [.removedStaleCopy(at: .init(.applicationSupport, "thumbs.db"))])
        #expect(!FileSystem.exists(stale))
        #expect(try Data(contentsOf: right) == Data("newer".utf8))
    }

    @Test("a re-creatable support file is excluded from backups once in place")
    func excludesOnArrival() throws {
        let root = try TemporaryRoot()
        let container = root.container
        try AtomicFile.write(Data("i".utf8), to: try container.url(for: "index.bin", in: .documents))
        _ = try FileRelocation(container: container).run([
            FilePlacement("index.bin", in: .applicationSupport, excludedFromBackup: true, formerLocations: [.init(.documents, "index.bin")])
        ])
        #expect(BackupExclusion.isExcluded(try container.url(for: "index.bin", in: .applicationSupport)))
    }
}
