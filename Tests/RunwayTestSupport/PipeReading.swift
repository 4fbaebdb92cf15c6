import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read from a child's pipe that failed: its `errno`.
public struct PipeReadFailure: Error, CustomStringConvertible {
    public let errno: Int32

    public var description: String { "read from a pipe failed: errno \(errno) (\(String(cString: strerror(errno))))" }
}

extension FileHandle {
    /// What the pipe holds now, up to `maximum` bytes, waiting for at least one byte; empty at
    /// its end. An interrupted read is read again; any other failure is thrown.
    ///
    /// The tests read their children's output through this and Foundation's throwing calls
    /// (`read(upToCount:)`, `readToEnd()`, `write(contentsOf:)`), never through
    /// `availableData`, `readData(ofLength:)`, `readDataToEndOfFile()` or `write(_:)`: those
    /// trap on a failed read or write, which ends the whole test process instead of one test.
    public func availableBytes(upTo maximum: Int = 64 * 1024) throws(PipeReadFailure) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = systemRead(fileDescriptor, &buffer, maximum)
            if count >= 0 { return Data(buffer[0..<count]) }
            let failure = errno
            if failure == EINTR { continue }
            throw PipeReadFailure(errno: failure)
        }
    }
}

/// read(2), which a `FileHandle` method of the same name hides inside the extension.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
    #else
    Darwin.read(descriptor, buffer, count)
    #endif
}

/// Reads one line from `reader` (without its newline), off the pool; what came before the end
/// of the output when it ends without one.
public func line(of reader: FileHandle) async throws -> String {
    try await offThePool {
        var bytes = Data()
        while true {
            let byte = try reader.availableBytes(upTo: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
