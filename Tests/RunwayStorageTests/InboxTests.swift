import Foundation
import Testing
@testable import RunwayStorage

@Suite("Incoming documents", .timeLimit(.minutes(10)))
struct InboxTests {
    @Test("an accepted document lands read-only in the inbox; opening it for editing moves it to Documents")
    func receiveAndEdit() throws {
        let root = try TemporaryRoot()
        let incoming = root.url.appendingPathComponent("report.pdf")
        try Data("%PDF-1.7 body".utf8).write(to: incoming)
        let inbox = Inbox(container: root.container, accepting: [.pdf, .plainText])
        let received = try inbox.receive(incoming)
        #expect(received.deletingLastPathComponent().lastPathComponent == "Inbox")
        #expect(FileSystem.permissions(of: received) == 0o444)
        #expect(FileSystem.permissions(of: try inbox.directory()) == 0o555)
        let second = try inbox.receive(incoming)
        #expect(second.lastPathComponent == "report 2.pdf")
        #expect(try inbox.contents().count == 2)

        let editable = try inbox.openForEditing(received)
        #expect(editable.deletingLastPathComponent().lastPathComponent == "Documents")
        #expect(FileSystem.permissions(of: editable) == 0o644)
        #expect(try Data(contentsOf: editable) == Data("%PDF-1.7 body".utf8))
        #expect(try inbox.contents().map(\.lastPathComponent) == ["report 2.pdf"])
    }

    @Test("undeclared types, and files whose bytes belie their extension, are refused with a clear error")
    func refusals() throws {
        let root = try TemporaryRoot()
        let inbox = Inbox(container: root.container, accepting: [.pdf])
        let script = root.url.appendingPathComponent("run.sh")
        try Data("#!/bin/sh".utf8).write(to: script)
        let fakePDF = root.url.appendingPathComponent("fake.pdf")
        try Data("MZ not a pdf".utf8).write(to: fakePDF)
        for refused in [script, fakePDF] {
            #expect { try inbox.receive(refused) } throws: { error in
                guard case .unsupportedContentType(let path, _) = error as? StorageError else { return false }
                return path == refused.lastPathComponent
            }
        }
        #expect(try inbox.contents().isEmpty)
        #expect(throws: StorageError.invalidPath(script.path)) { try inbox.openForEditing(script) }
    }
}

@Suite("Inventory of what the app stores", .timeLimit(.minutes(10)))
struct InventoryTests {
    @Test("the report lists files per role with sizes, backup status and totals")
    func report() throws {
        let root = try TemporaryRoot()
        let container = root.container
        try AtomicFile.write(Data(count: 10), to: try container.url(for: "a.txt", in: .documents))
        try AtomicFile.write(Data(count: 20), to: try container.url(for: "db.sqlite", in: .applicationSupport))
        let index = try container.url(for: "index.bin", in: .applicationSupport)
        try AtomicFile.write(Data(count: 5), to: index)
        try BackupExclusion.exclude(index)
        try AtomicFile.write(Data(count: 40), to: try container.url(for: "http/x.json", in: .caches))

        let report = StorageReport(container: container)
        let byRole = Dictionary(uniqueKeysWithValues: report.roles.map { ($0.role, $0) })
        #expect(byRole[.documents]?.files == [.init(path: "a.txt", bytes: 10, backedUp: true)])
        #expect(byRole[.applicationSupport]?.files == [
            .init(path: "db.sqlite", bytes: 20, backedUp: true), .init(path: "index.bin", bytes: 5, backedUp: false),
        ])
        #expect(byRole[.caches]?.files == [.init(path: "http/x.json", bytes: 40, backedUp: false)])
        #expect(report.totalBytes == 75)
        #expect(report.backedUpBytes == 30)
        #expect(report.fileCount == 4)
        #expect(report.text.contains("All roles: 4 files, 75 B, of which 30 B backed up"))
        let json = try JSONEncoder().encode(report)
        #expect(try JSONDecoder().decode(StorageReport.self, from: json) == report)
    }
}
