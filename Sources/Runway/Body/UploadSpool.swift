import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder where a body is written before it is sent, when a transport can send only bytes
/// or a whole file (URLSession and a multipart form), and the sweep that removes what a crashed
/// process left there.
///
/// Each spool file is named after the process that wrote it (`<pid>-<uuid>`), so the sweep —
/// run once per process, off the caller's thread, when the first transport that spools is made —
/// removes only the files of processes that are gone, never a file another live process (or
/// another engine of this one) is sending. The folder and its files are this user's only.
enum UploadSpool {
    /// `runway-upload-spool` in the temporary directory.
    static var directory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("runway-upload-spool", isDirectory: true)
    }

    /// A new, empty spool file's place in `directory`, named for this process.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` when the folder cannot be made.
    static func makeFile(in directory: URL = directory) throws(RunwayError) -> URL {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .invalidRequest(reason: "cannot make \(directory.path) for the body: \(error.localizedDescription)")
        }
        return directory.appendingPathComponent("\(getpid())-\(UUID().uuidString.lowercased())")
    }

    /// Removes every spool file in `directory` whose process is gone; leaves files of live
    /// processes and files not named like a spool file.
    ///
    /// - returns: How many files were removed.
    @discardableResult
    static func removeLeftovers(in directory: URL = directory) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names {
            guard let dash = name.firstIndex(of: "-"), let pid = pid_t(name[..<dash]), pid > 0,
                !isAlive(pid)
            else { continue }
            if (try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))) != nil {
                removed += 1
            }
        }
        return removed
    }

    /// Starts the sweep once per process, on a background queue: it reads a folder, which the
    /// main thread never waits for.
    static func sweepOnce() { _ = sweep }

    private static let sweep: Void = {
        // A serial queue of its own: a global queue shares the threads of Swift's tasks on Linux.
        DispatchQueue(label: BlockingWork.label, qos: .utility).async { removeLeftovers() }
    }()

    /// Whether a process `pid` exists (one that exists but is another user's counts too).
    private static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
