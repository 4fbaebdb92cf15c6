import Foundation
import NIOCore
import Runway

/// A request body read from its files chunk by chunk, as AsyncHTTPClient asks for the next
/// bytes; each attempt iterates it from the start. The files are read on the exchange's lane
/// when it has one (AsyncHTTPClient asks in a task, and a read may wait for the disk).
struct BodyChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: TransportBody
    let progress: (@Sendable (Int64) -> Void)?
    let lane: BlockingLane?

    func makeAsyncIterator() -> Iterator {
        Iterator(reader: body.makeReader(), progress: progress, lane: lane)
    }

    struct Iterator: AsyncIteratorProtocol {
        let reader: BodyReader
        let progress: (@Sendable (Int64) -> Void)?
        let lane: BlockingLane?
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            let read: Data?
            if let lane {
                // One read at a time: the iterator waits for each before it asks for the next.
                nonisolated(unsafe) let reader = reader
                read = try await lane.run { () throws(RunwayError) in try reader.read(upTo: BodyReader.chunkSize) }
            } else {
                read = try reader.read(upTo: BodyReader.chunkSize)
            }
            guard let chunk = read else { return nil }
            // Reported as handed to the connection, which writes it before asking for more.
            sent += Int64(chunk.count)
            progress?(sent)
            return ByteBuffer(bytes: chunk)
        }
    }
}
