import Crypto
import Foundation
import Hummingbird
import Runway

/// A request body that hashes its bytes as they stream to the route and fails at the end if
/// they do not match the signed hash (or as soon as they pass the size limit), so the verifier
/// never buffers a body to check it.
struct HashCheckedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    enum Refusal: Error {
        case mismatch
        case tooLarge
    }

    let base: RequestBody
    let expectedHash: String
    let maximumSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let expectedHash: String
        let maximumSize: Int
        var hasher = SHA256()
        var size = 0
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            guard !finished else { return nil }
            guard let chunk = try await base.next() else {
                finished = true
                guard RequestSignature.hex(hasher.finalize()) == expectedHash else { throw Refusal.mismatch }
                return nil
            }
            size += chunk.readableBytes
            guard size <= maximumSize else { throw Refusal.tooLarge }
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), expectedHash: expectedHash, maximumSize: maximumSize)
    }
}
