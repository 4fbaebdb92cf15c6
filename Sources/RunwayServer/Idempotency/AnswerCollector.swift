import Hummingbird
import NIOConcurrencyHelpers

/// The bytes of a handler's answer, gathered to be kept and sent.
final class BodyCollector: Sendable {
    private let buffer = NIOLockedValueBox([UInt8]())

    func append(_ chunk: ByteBuffer) {
        buffer.withLockedValue { $0.append(contentsOf: chunk.readableBytesView) }
    }

    var bytes: [UInt8] { buffer.withLockedValue { $0 } }
}

/// A response body writer that gathers into a ``BodyCollector`` instead of the wire.
struct CollectingWriter: ResponseBodyWriter {
    let collector: BodyCollector

    mutating func write(_ buffer: ByteBuffer) async throws { collector.append(buffer) }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
