import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FileHandle {
    /// What the pipe holds now, waiting for at least one byte; empty at its end or when the
    /// read fails. Foundation's `availableData` traps on a failed read and `write(_:)` on a
    /// failed write: the benchmarks' processes read and write their pipes through this and
    /// `write(contentsOf:)`.
    func availableBytes() -> Data {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            #if canImport(Glibc)
            let count = Glibc.read(fileDescriptor, &buffer, buffer.count)
            #else
            let count = Darwin.read(fileDescriptor, &buffer, buffer.count)
            #endif
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}
