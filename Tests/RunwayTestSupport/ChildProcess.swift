import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for the test suites, started with `posix_spawn` — Foundation's `Process`,
/// narrowed to what the tests use.
///
/// Not `Process`, for two reasons seen in this suite:
/// - On Linux, `Process.run()` lists `/proc/self/fd` to find the descriptors to close, copying
///   each entry's whole 256-byte name field; with more than about 1,300 descriptors open (the
///   suite's parallel servers reach 1,800) an entry sits at the end of glibc's read buffer and
///   the copy reads past it: the test process crashes (swift-corelibs-foundation #5472, fixed
///   after Swift 6.3.1). This closes every other descriptor with
///   `posix_spawn_file_actions_addclosefrom_np` instead, which lists nothing.
/// - `Process` learns of a child's exit through a descriptor the child inherits, so a child
///   that leaves a daemon running (`pg_ctl start`) never seems to end; this waits with `waitpid`.
///
/// Set up and ``run()`` it on one task before sharing it: its streams are set by `run()`;
/// waiting, polling and signalling are safe from any thread.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe whose other end this process reads (or, for input, writes).
        case pipe
        /// A file, created or emptied.
        case file(String)
        /// The same as the child's standard output (for standard error).
        case output
        /// This process's own stream of the same number.
        case inherited
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        case exit
        case uncaughtSignal
    }

    public let executable: String
    public let arguments: [String]
    private let environment: [String: String]?
    private let directory: String?
    private let input: Stream
    private let output: Stream
    private let error: Stream

    /// The write end of the child's standard input, when it is a pipe.
    public private(set) var standardInput: FileHandle?
    /// The read end of the child's standard output, when it is a pipe.
    public private(set) var standardOutput: FileHandle?
    /// The read end of the child's standard error, when it is a pipe.
    public private(set) var standardError: FileHandle?
    /// The child's process id, once it runs.
    public private(set) var processIdentifier: pid_t = 0

    private let lock = NSLock()
    private var waitStatus: Int32? {
        didSet {
            guard waitStatus != nil else { return }
            scratch?.remove()
            Leftovers.shared.remove(processIdentifier)
        }
    }
    /// A folder the child writes in and no one reads after it: removed once the child has ended.
    private let scratch: ScratchFolder?

    /// A child that runs `executable` (a path) with `arguments`, in `directory`, with
    /// `environment` (this process's when `nil`); `scratch` is removed once it has ended (seen
    /// by a wait or a poll), or when this object goes.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, directory: String? = nil,
        input: Stream = .null, output: Stream = .null, error: Stream = .null, scratch: ScratchFolder? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.input = input
        self.output = output
        self.error = error
        self.scratch = scratch
    }

    deinit {
        scratch?.remove()
    }

    /// Why a child could not be started.
    public struct SpawnFailure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Starts the child.
    public func run() throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { for end in childEnds { close(end) } }
        // Each stream: the child's end duplicated onto 0, 1 or 2; every pipe end is
        // close-on-exec, so only the duplicate reaches the child.
        func attach(_ stream: Stream, to target: Int32) throws -> FileHandle? {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                return nil
            case .output:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
                return nil
            case .inherited:
                return nil
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw SpawnFailure(description: "pipe: errno \(errno)") }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                let (childEnd, ownEnd) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(childEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                return FileHandle(fileDescriptor: ownEnd, closeOnDealloc: true)
            }
        }
        standardInput = try attach(input, to: 0)
        standardOutput = try attach(output, to: 1)
        standardError = try attach(error, to: 2)
        if let directory { try Self.changeDirectory(&actions, to: directory) }
        try Self.closeEverythingElse(&actions)

        let argv = [executable] + arguments
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        // The child starts with no signal blocked and every signal's default action: a mask or
        // an ignored SIGTERM of the test process (its runtimes' threads block some) would
        // otherwise pass through exec, and a server such as nginx would never see the SIGTERM
        // that stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let spawned: Int32
        if let environment {
            let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for entry in cEnvironment { free(entry) } }
            spawned = posix_spawn(&pid, executable, &actions, &attributes, cArguments, cEnvironment)
        } else {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, cArguments, environ)
        }
        guard spawned == 0 else { throw SpawnFailure(description: "cannot start \(executable): errno \(spawned)") }
        processIdentifier = pid
        Leftovers.shared.add(pid)
    }

    /// Whether this process kills the child when it exits: from its start until a wait or a poll
    /// sees it end (``Leftovers``).
    public var isKilledAtExit: Bool {
        Leftovers.shared.contains(processIdentifier)
    }

    /// Makes the child close every descriptor above standard error before it runs, so that it
    /// inherits none of the suite's sockets (a test server's listening socket kept open by a
    /// child goes on accepting connections nobody serves). glibc 2.34 has
    /// `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not export;
    /// it is looked up by name. (Apple's `Process` has neither problem; there the tests rely on
    /// close-on-exec.)
    private static func closeEverythingElse(_ actions: inout posix_spawn_file_actions_t) throws {
        #if os(Linux)
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw SpawnFailure(description: "this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34+)")
        }
        let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
        let result = closeFrom(&actions, 3)
        guard result == 0 else { throw SpawnFailure(description: "posix_spawn_file_actions_addclosefrom_np: errno \(result)") }
        #endif
    }

    /// Makes the child start in `directory`. `posix_spawn_file_actions_addchdir_np` (glibc 2.29,
    /// macOS 10.15) is not exported by Swift's Glibc module; it is looked up by name.
    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to directory: String) throws {
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            throw SpawnFailure(description: "this C library has no posix_spawn_file_actions_addchdir_np")
        }
        let result = unsafeBitCast(symbol, to: AddChdir.self)(&actions, directory)
        guard result == 0 else { throw SpawnFailure(description: "posix_spawn_file_actions_addchdir_np: errno \(result)") }
    }

    /// Blocks until the child has ended.
    public func waitUntilExit() {
        if lock.withLock({ waitStatus != nil }) { return }
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(processIdentifier, &status, 0) } while reaped < 0 && errno == EINTR
        if reaped == processIdentifier { lock.withLock { waitStatus = status } }
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool {
        lock.withLock {
            guard waitStatus == nil, processIdentifier > 0 else { return false }
            var status: Int32 = 0
            let reaped = waitpid(processIdentifier, &status, WNOHANG)
            if reaped == processIdentifier { waitStatus = status }
            return reaped == 0
        }
    }

    private var ended: Int32 {
        waitUntilExit()
        return lock.withLock { waitStatus } ?? 0
    }

    /// The exit code, or the number of the signal that ended the child; waits for the end.
    public var terminationStatus: Int32 {
        let status = ended
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }

    /// Whether the child exited or a signal ended it; waits for the end.
    public var terminationReason: TerminationReason {
        ended & 0x7F == 0 ? .exit : .uncaughtSignal
    }

    /// Sends SIGTERM.
    public func terminate() {
        if processIdentifier > 0, lock.withLock({ waitStatus == nil }) { kill(processIdentifier, SIGTERM) }
    }

    /// Sends SIGINT.
    public func interrupt() {
        if processIdentifier > 0, lock.withLock({ waitStatus == nil }) { kill(processIdentifier, SIGINT) }
    }
}
