import Foundation

/// The process's standard output or standard error, written unbuffered and never with a trap.
///
/// Foundation's `FileHandle.write(_:)` is `try! write(contentsOf:)`: when the reader has gone
/// (a pipe closed by `head`, by a supervisor, by a test that stopped reading), the write fails
/// with `EPIPE` — on Linux SwiftNIO ignores SIGPIPE for the whole process once it opens a socket
/// — and the process traps. Here such a write is dropped instead: nobody is left to read it.
enum StandardStream {
    case output
    case error

    /// Writes `text` at once (a parent reading the pipe sees it before a kill); `false` when
    /// it could not be written.
    @discardableResult
    func write(_ text: String) -> Bool {
        let handle = self == .output ? FileHandle.standardOutput : FileHandle.standardError
        do {
            try handle.write(contentsOf: Data(text.utf8))
            return true
        } catch {
            return false
        }
    }
}
