import Foundation
import RunwayTestSupport
import Testing

@testable import Runway

@Suite("Upload spool: this user's files only, and what a crash left is removed at launch", .timeLimit(.minutes(10)))
struct UploadSpoolTests {
    @Test("a spool file of a killed process is removed; one of a live process, and a file not named like one, stay")
    func leftoversOfACrash() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ours = try UploadSpool.makeFile(in: folder)
        #expect(FileManager.default.createFile(atPath: ours.path, contents: Data("sending".utf8)))
        #expect(try permissions(folder) == 0o700, "the spool folder is this user's only")

        // A process writes a spool file named after itself, as `makeFile` names it, and is
        // killed in the middle, as a crash would end it.
        let crashed = ChildProcess("/bin/sh", ["-c", #"echo "half a form" > "$0/$$-0b8c"; kill -KILL $$"#, folder.path])
        try crashed.run()
        crashed.waitUntilExit()
        #expect(crashed.terminationReason == .uncaughtSignal)
        let left = folder.appendingPathComponent("\(crashed.processIdentifier)-0b8c")
        #expect(FileManager.default.fileExists(atPath: left.path))
        let unrelated = folder.appendingPathComponent("notes.txt")
        #expect(FileManager.default.createFile(atPath: unrelated.path, contents: nil))

        #expect(UploadSpool.removeLeftovers(in: folder) == 1)
        #expect(!FileManager.default.fileExists(atPath: left.path))
        #expect(FileManager.default.fileExists(atPath: ours.path), "this process is alive: its file is being sent")
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
    }
}
