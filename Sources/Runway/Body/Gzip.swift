internal import CZlib
public import Foundation

/// gzip (RFC 1952) over the system zlib, without SwiftNIO: what operation-log uploads send and
/// what a collector reads back.
///
/// Decompression is bounded: a small body that inflates past `limit` (a "zip bomb") is refused
/// after at most `limit` bytes were produced, so a server never holds more than it allows.
public enum Gzip {
    /// Why gzip data could not be made or read.
    public enum Failure: Error, Sendable, Hashable {
        /// The input is not gzip, or is damaged or cut short.
        case malformed(String)
        /// The input inflates past the limit given.
        case tooLarge(limit: Int)
        /// zlib refused to start (out of memory).
        case unavailable(String)
    }

    /// `data` compressed as one gzip member.
    ///
    /// - parameters:
    ///   - data: The bytes to compress.
    ///   - level: 1 (fastest) through 9 (smallest); 6 by default, as gzip's own.
    public static func compress(_ data: Data, level: Int32 = 6) throws(Failure) -> Data {
        var stream = z_stream()
        // 15 window bits + 16: write a gzip header and trailer rather than zlib's.
        let started = deflateInit2_(
            &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw .unavailable("deflateInit2 returned \(started)") }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, UInt(data.count))) + 32)
        let produced: Int = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                stream.next_in = UnsafeMutablePointer(
                    mutating: input.bindMemory(to: Bytef.self).baseAddress ?? UnsafePointer(bitPattern: 1))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(out.count)
                let status = deflate(&stream, Z_FINISH)
                return status == Z_STREAM_END ? Int(stream.total_out) : -1
            }
        }
        guard produced >= 0 else { throw .unavailable("deflate did not finish within its bound") }
        output.count = produced
        return output
    }

    /// The bytes of the gzip data `data`, refusing to produce more than `limit`.
    ///
    /// - throws: ``Failure/malformed(_:)`` for input that is not one complete gzip stream (trailing
    ///   bytes included); ``Failure/tooLarge(limit:)`` as soon as the output would exceed `limit`.
    public static func decompress(_ data: Data, limit: Int) throws(Failure) -> Data {
        var stream = z_stream()
        let started = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard started == Z_OK else { throw .unavailable("inflateInit2 returned \(started)") }
        defer { inflateEnd(&stream) }
        let chunk = 64 * 1024
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: chunk)
        let outcome: Result<Void, Failure> = data.withUnsafeBytes { input in
            stream.next_in = UnsafeMutablePointer(
                mutating: input.bindMemory(to: Bytef.self).baseAddress ?? UnsafePointer(bitPattern: 1))
            stream.avail_in = uInt(input.count)
            while true {
                let (status, count) = buffer.withUnsafeMutableBytes { out in
                    stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(chunk)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, chunk - Int(stream.avail_out))
                }
                if output.count + count > limit { return .failure(.tooLarge(limit: limit)) }
                output.append(contentsOf: buffer[0..<count])
                switch status {
                case Z_STREAM_END:
                    guard stream.avail_in == 0 else { return .failure(.malformed("bytes after the end of the gzip stream")) }
                    return .success(())
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .failure(.malformed("the gzip stream is cut short"))
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    return .failure(.malformed(message))
                }
            }
        }
        try outcome.get()
        return output
    }
}
