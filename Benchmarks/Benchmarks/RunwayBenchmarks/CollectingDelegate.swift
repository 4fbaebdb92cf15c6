import AsyncHTTPClient
import NIOCore

/// AsyncHTTPClient's delegate interface at its plainest: the body gathered into one buffer on
/// the request's event loop, handed back whole — what Runway's transport does for an API
/// call's exchange, without Runway. The profiling mode's `rawdelegate` way.
final class CollectingDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    private var body = ByteBuffer()

    func didReceiveBodyPart(task: HTTPClient.Task<ByteBuffer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var buffer = buffer
        body.writeBuffer(&buffer)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<ByteBuffer>) throws -> ByteBuffer {
        body
    }
}
