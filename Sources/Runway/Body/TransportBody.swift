import Crypto
public import Foundation

/// A request body as transports send it: bytes in memory, a file, or a sequence of both (a
/// multipart form), with its length known before the first byte is sent.
///
/// Files are read chunk by chunk while the body is sent, never loaded whole, and read again for
/// each attempt; a file whose size changed since the body was made fails the exchange with
/// ``RunwayError/invalidRequest(reason:)`` rather than sending something else.
public struct TransportBody: Sendable {
    /// One piece of a body.
    public enum Segment: Sendable {
        /// Bytes held in memory.
        case bytes(Data)
        /// The whole file at a URL, of the given length.
        case file(URL, length: Int64)
    }

    /// The pieces, in order.
    public let segments: [Segment]
    /// The number of bytes the body sends.
    public let length: Int64

    /// A body of `data`.
    public init(_ data: Data) {
        self.init(segments: [.bytes(data)])
    }

    /// A body of the given pieces.
    public init(segments: [Segment]) {
        self.segments = segments
        self.length = segments.reduce(0) { total, segment in
            switch segment {
            case .bytes(let data): return total + Int64(data.count)
            case .file(_, let length): return total + length
            }
        }
    }

    /// A body of the file at `url`, whose size is read now.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` when the file cannot be read.
    public static func file(_ url: URL) throws(RunwayError) -> TransportBody {
        TransportBody(segments: [.file(url, length: try fileLength(url))])
    }

    /// The bytes, when the body is held in memory (one piece, or none).
    public var data: Data? {
        switch segments.count {
        case 0: return Data()
        case 1: if case .bytes(let data) = segments[0] { return data }
        default: break
        }
        if segments.allSatisfy({ if case .bytes = $0 { true } else { false } }) {
            return segments.reduce(into: Data()) { all, segment in
                if case .bytes(let data) = segment { all.append(data) }
            }
        }
        return nil
    }

    /// The file, when the body is exactly one whole file.
    public var file: URL? {
        if segments.count == 1, case .file(let url, _) = segments[0] { return url }
        return nil
    }

    /// A reader over the body from its first byte; each attempt makes its own.
    public func makeReader() -> BodyReader { BodyReader(segments) }

    /// Writes the whole body to `destination`, chunk by chunk (what a transport that can send
    /// only files or bytes does with a multipart form). The file is readable by this user only:
    /// a form may hold what nobody else on the machine should read.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` when a file cannot be read or written.
    public func write(to destination: URL) throws(RunwayError) {
        guard FileManager.default.createFile(
            atPath: destination.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw .invalidRequest(reason: "cannot create \(destination.path) for the body")
        }
        let output: FileHandle
        do { output = try FileHandle(forWritingTo: destination) } catch {
            throw .invalidRequest(reason: "cannot write \(destination.path): \(error)")
        }
        defer { try? output.close() }
        let reader = makeReader()
        defer { reader.close() }
        while let chunk = try reader.read(upTo: BodyReader.chunkSize) {
            do { try output.write(contentsOf: chunk) } catch {
                throw .invalidRequest(reason: "cannot write \(destination.path): \(error)")
            }
        }
    }

    /// The SHA-256 of the body as lowercase hex, read chunk by chunk (what signers receive for a
    /// body that is not in memory).
    func sha256Hex() throws(RunwayError) -> String {
        var hasher = SHA256()
        let reader = makeReader()
        defer { reader.close() }
        while let chunk = try reader.read(upTo: BodyReader.chunkSize) { hasher.update(data: chunk) }
        return RequestSignature.hex(hasher.finalize())
    }

    static func fileLength(_ url: URL) throws(RunwayError) -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
                throw RunwayError.invalidRequest(reason: "\(url.path) is not a regular file")
            }
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch let error as RunwayError {
            throw error
        } catch {
            throw .invalidRequest(reason: "cannot read \(url.path): \(error.localizedDescription)")
        }
    }
}

/// Reads a ``TransportBody`` from its first byte to its last, one chunk at a time.
///
/// Not thread-safe: one exchange reads it, in order.
public final class BodyReader {
    /// The chunk size transports read: large enough for few system calls, small enough that a
    /// body never costs more than a few chunks of memory.
    public static let chunkSize = 256 * 1024

    private var segments: ArraySlice<TransportBody.Segment>
    private var handle: FileHandle?
    private var fileRemaining: Int64 = 0
    private var fileURL: URL?

    init(_ segments: [TransportBody.Segment]) {
        self.segments = segments[...]
    }

    deinit { close() }

    /// The next chunk of at most `maximum` bytes, or `nil` after the last byte.
    ///
    /// - throws: ``RunwayError/invalidRequest(reason:)`` when a file cannot be read or is no
    ///   longer the length it had when the body was made.
    public func read(upTo maximum: Int) throws(RunwayError) -> Data? {
        while true {
            if let handle, let fileURL {
                if fileRemaining == 0 {
                    // The file must end where its length said.
                    let extra = (try? handle.read(upToCount: 1)) ?? nil
                    closeFile()
                    if let extra, !extra.isEmpty { throw Self.changed(fileURL) }
                    continue
                }
                let wanted = Int(min(Int64(maximum), fileRemaining))
                let chunk: Data
                do { chunk = try handle.read(upToCount: wanted) ?? Data() } catch {
                    closeFile()
                    throw .invalidRequest(reason: "cannot read \(fileURL.path): \(error.localizedDescription)")
                }
                guard !chunk.isEmpty else {
                    closeFile()
                    throw Self.changed(fileURL)
                }
                fileRemaining -= Int64(chunk.count)
                return chunk
            }
            guard let next = segments.popFirst() else { return nil }
            switch next {
            case .bytes(let data):
                if data.isEmpty { continue }
                if data.count <= maximum { return data }
                // Hand out a large in-memory piece in chunks too.
                segments.insert(.bytes(data.dropFirst(maximum)), at: segments.startIndex)
                return data.prefix(maximum)
            case .file(let url, let length):
                do { handle = try FileHandle(forReadingFrom: url) } catch {
                    throw .invalidRequest(reason: "cannot read \(url.path): \(error.localizedDescription)")
                }
                fileURL = url
                fileRemaining = length
            }
        }
    }

    /// Closes the file being read, if any.
    public func close() {
        closeFile()
        segments = []
    }

    private func closeFile() {
        try? handle?.close()
        handle = nil
        fileURL = nil
    }

    private static func changed(_ url: URL) -> RunwayError {
        .invalidRequest(reason: "\(url.path) changed size while it was being sent")
    }
}
