import NIOCore
import Runway

/// A request body read from its files chunk by chunk, as AsyncHTTPClient asks for the next
/// bytes; each attempt iterates it from the start.
struct BodyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: TransportBody
    let progress: (@Sendable (Int64) -> Void)?

    func makeAsyncIterator() -> Iterator {
        Iterator(reader: body.makeReader(), progress: progress)
    }

    struct Iterator: AsyncIteratorProtocol {
        let reader: BodyReader
        let progress: (@Sendable (Int64) -> Void)?
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try reader.read(upTo: BodyReader.chunkSize) else { return nil }
            // Reported as handed to the connection, which writes it before asking for more.
            sent += Int64(chunk.count)
            progress?(sent)
            return ByteBuffer(bytes: chunk)
        }
    }
}
