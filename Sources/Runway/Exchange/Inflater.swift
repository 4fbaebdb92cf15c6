internal import CZlib
import Foundation

/// Undoes one gzip or deflate content coding as a body streams in, a chunk at a time, over the
/// system zlib.
///
/// `deflate` is read the way browsers and libcurl read it: zlib's format (RFC 1950) as the
/// coding's definition says, or the bare deflate stream (RFC 1951) that some servers send
/// instead, told apart by the first two bytes. `gzip` accepts several members one after
/// another (RFC 1952 §2.2). Not `Sendable`: one ``DecodingSink`` owns it behind its lock.
final class Inflater {
    enum Format {
        case gzip
        case deflate
    }

    private let format: Format
    private var stream = z_stream()
    private var started = false
    /// The first bytes of a deflate body, held until there are two to tell its format by.
    private var heldPrefix: [UInt8] = []
    /// Whether the stream reached its end (for gzip, the end of its last member so far).
    private var ended = false
    /// Whether any byte of the coded body arrived.
    private var sawInput = false
    private var output = [UInt8](repeating: 0, count: 32 * 1024)

    /// The inflater for `coding` (`gzip`, `x-gzip` or `deflate`), or `nil` for any other.
    init?(coding: String) {
        switch coding {
        case "gzip", "x-gzip": format = .gzip
        case "deflate": format = .deflate
        default: return nil
        }
    }

    deinit {
        if started { inflateEnd(&stream) }
    }

    /// Whether the coded body arrived whole: no bytes at all (a head alone), or a stream that
    /// reached its end. A body cut short with its framing intact is not.
    var isComplete: Bool { !sawInput || ended }

    /// Inflates `bytes`, handing each decoded piece to `emit` as it is produced.
    ///
    /// - throws: ``TransportFault/undecodableBody`` when the bytes are not in the coding; what
    ///   `emit` throws.
    func inflate(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !bytes.isEmpty else { return }
        sawInput = true
        if !started {
            guard format == .gzip || heldPrefix.count + bytes.count >= 2 else {
                heldPrefix.append(contentsOf: bytes)
                return
            }
            let held = heldPrefix + bytes.prefix(2 - min(heldPrefix.count, 2))
            try start(zlibWrapped: format == .gzip || Self.isZlibHeader(held))
            if !heldPrefix.isEmpty {
                let prefix = heldPrefix
                heldPrefix = []
                try prefix.withUnsafeBytes { try feed($0, emit: emit) }
            }
        }
        try feed(bytes, emit: emit)
    }

    /// Whether two bytes open a zlib stream (RFC 1950 §2.2): deflate with a window of at most
    /// 32 KB, and a header whose check bits make it a multiple of 31.
    static func isZlibHeader(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2 else { return false }
        let method = bytes[0] & 0x0F, window = bytes[0] >> 4
        return method == 8 && window <= 7 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
    }

    private func start(zlibWrapped: Bool) throws {
        // 15 + 32: a zlib or gzip header, told by zlib itself; -15: no header at all.
        let windowBits: Int32 = format == .gzip ? 15 + 32 : (zlibWrapped ? 15 : -15)
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TransportFault.other("zlib could not start")
        }
        started = true
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = bytes.bindMemory(to: Bytef.self).baseAddress else { return }
        stream.next_in = UnsafeMutablePointer(mutating: base)
        stream.avail_in = uInt(bytes.count)
        defer {
            stream.next_in = nil
            stream.avail_in = 0
        }
        let capacity = output.count
        while true {
            if ended {
                guard stream.avail_in > 0 else { return }
                // Another gzip member follows; anything else after the end is not the coding.
                guard format == .gzip, stream.next_in.pointee == 0x1F, inflateReset(&stream) == Z_OK else {
                    throw TransportFault.undecodableBody
                }
                ended = false
            }
            let (status, produced) = output.withUnsafeMutableBytes { buffer -> (Int32, Int) in
                stream.next_out = buffer.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(capacity)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                return (status, capacity - Int(stream.avail_out))
            }
            if produced > 0 { try output.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) } }
            switch status {
            case Z_STREAM_END:
                ended = true
            case Z_OK, Z_BUF_ERROR:
                // All input taken and all output given (a full buffer may hide more): wait for
                // the next chunk.
                if stream.avail_in == 0, produced < capacity { return }
                // Input left, room to write, and nothing produced: zlib cannot go on.
                if status == Z_BUF_ERROR, produced == 0 { throw TransportFault.undecodableBody }
            default:
                throw TransportFault.undecodableBody
            }
        }
    }
}
