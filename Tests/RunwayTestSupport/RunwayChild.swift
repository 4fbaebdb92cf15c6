import Foundation
import Runway

/// The `runway` executable that `swift test` builds beside the test bundle (in its build
/// folder, debug or release), or in the package's default debug folder.
public func runwayExecutable() -> URL {
    let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("runway"),
        packageRoot.appendingPathComponent(".build/debug/runway"),
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[1]
}

/// Starts `runway` with `arguments` at a lower scheduling priority (`niceness`, default the
/// lowest), so that the transfers' bursts of CPU do not starve the tests running beside them,
/// and returns it with its standard output (standard error is dropped).
///
/// A child whose own progress a test waits on through many rounds (the operation log's kill
/// test) asks for less: at the lowest priority beside eight CPU-bound processes it gets almost
/// no CPU at all, and the test's run stretches past any sensible limit.
///
/// - parameter inNewPIDNamespace: Runs it as process 1 of a PID namespace of its own
///   (`unshare`, as root): every such run has the same process id, as each run of a container does.
///   End it with `SIGKILL`, not ``ChildProcess/terminate()``: `unshare` blocks `SIGTERM` while it
///   waits, and `--kill-child` ends `runway` when `unshare` dies.
/// - parameter temporaryFolder: The child's `TMPDIR`, which the caller keeps and removes; by
///   default a folder of the child's own, removed once it has ended (``ChildProcess``).
public func startNiced(
    _ arguments: [String], niceness: Int = 19, inNewPIDNamespace: Bool = false, temporaryFolder: URL? = nil
) throws -> (ChildProcess, FileHandle) {
    let niced = ["-n", "\(niceness)", runwayExecutable().path] + arguments
    // The child's temporary folder (`runway serve`'s default databases go there): its own,
    // removed once it has ended, unless the caller gives one it keeps itself.
    let scratch = temporaryFolder == nil ? try ScratchFolder("child") : nil
    var environment = ProcessInfo.processInfo.environment
    environment["TMPDIR"] = (temporaryFolder ?? scratch?.url)?.path
    let process =
        inNewPIDNamespace
        ? ChildProcess(
            "/usr/bin/unshare", ["--pid", "--kill-child", "/usr/bin/nice"] + niced, environment: environment, output: .pipe,
            scratch: scratch)
        : ChildProcess("/usr/bin/nice", niced, environment: environment, output: .pipe, scratch: scratch)
    try process.run()
    guard let output = process.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
    return (process, output)
}

/// Runs `runway` with `arguments` in a child process and returns its last line of output,
/// parsed as JSON. The wait happens off the pool (``offThePool(_:)``): blocking one of the few
/// threads Swift concurrency runs every test on would stall the rest of the suite for the
/// child's whole run.
///
/// The child runs at niceness 5: a transfer measured at the lowest priority beside CPU-bound
/// processes is starved, and its memory then shows what a starved delegate leaves waiting (a
/// 48 MiB download over Linux's URLSession peaked 30 MB above its start that way beside eight
/// `yes`, before its delegate queue kept a bounded room).
public func runRunway(_ arguments: [String]) async throws -> [String: Any] {
    let (process, reader) = try startNiced(arguments, niceness: 5)
    let data = try await offThePool {
        defer { process.waitUntilExit() }
        return try reader.readToEnd() ?? Data()
    }
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").last,
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else {
        throw TransferChildFailed(status: process.terminationStatus, output: text)
    }
    return object
}

public struct TransferChildFailed: Error, Sendable {
    public var status: Int32
    public var output: String
}

/// `runway serve --quiet` in a child process: the transfers' bytes never pass through this
/// process's event loops, which every other test of the suite shares.
public final class ChildDemoServer: Sendable {
    public let process: ChildProcess
    public let baseURL: String

    public init() async throws {
        let (process, reader) = try startNiced(["serve", "--quiet", "--demo"])
        let line = try await offThePool {
            var text = ""
            while !text.contains("\n") {
                let chunk = try reader.availableBytes()
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        guard let start = line.range(of: "http://"),
            let url = line[start.lowerBound...].split(separator: " ").first
        else {
            process.terminate()
            throw TransferChildFailed(status: -1, output: line)
        }
        self.process = process
        self.baseURL = String(url)
    }

    public func stop() async {
        process.terminate()
        let process = self.process
        await offThePool { process.waitUntilExit() }
    }
}

/// `runway serve --quiet` with `arguments`; its banner lines, read until `last` matches.
public func startServe(
    _ arguments: [String], niceness: Int = 19, inNewPIDNamespace: Bool = false, temporaryFolder: URL? = nil,
    until last: @escaping @Sendable (String) -> Bool
) async throws -> (ChildProcess, baseURL: String, banner: [String]) {
    let (process, reader) = try startNiced(
        ["serve", "--quiet"] + arguments, niceness: niceness, inNewPIDNamespace: inNewPIDNamespace,
        temporaryFolder: temporaryFolder)
    var banner: [String] = []
    while banner.last.map(last) != true {
        let next = try await line(of: reader)
        if next.isEmpty && !process.isRunning { break }
        banner.append(next)
    }
    guard let first = banner.first, let start = first.range(of: "http://"),
        let url = first[start.lowerBound...].split(separator: " ").first
    else {
        process.terminate()
        throw RunwayError.invalidRequest(reason: "runway serve printed \(banner)")
    }
    return (process, String(url), banner)
}

/// Reads `process`'s output line by line, handing each to `onLine`; once `killAfter` lines that
/// `onLine` counted (returned `true` for) were seen, kills it with SIGKILL after a random 0–20 ms more — a random moment, not only right
/// after a line: mid-commit, mid-send. Returns when the output ends (the child died or finished).
/// Off the pool: the reads block. A failed read kills the child and is thrown.
public func readUntilKilled(
    _ process: ChildProcess, _ reader: FileHandle, killAfter: Int, onLine: @escaping @Sendable (String) -> Bool
) async throws {
    try await offThePool {
        var lines = 0
        var buffer = Data()
        var killed = false
        while true {
            let chunk: Data
            do { chunk = try reader.availableBytes() } catch {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw error
            }
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if onLine(line) { lines += 1 }
            }
            if !killed, lines >= killAfter {
                usleep(UInt32.random(in: 0...20_000))
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
    }
}
