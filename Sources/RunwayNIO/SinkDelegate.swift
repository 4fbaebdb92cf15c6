import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import Runway

/// Hands an answer to a sink that keeps it in memory as AsyncHTTPClient reads it, on the event
/// loop of the request: no Swift task per exchange and no hop per part, one hop back with the
/// whole answer.
///
/// AsyncHTTPClient calls a delegate on its task's event loop, one call at a time, so the state
/// here is never touched from two threads at once.
final class SinkDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
    /// The last head and the HTTP version it came in.
    struct Answer: Sendable {
        var head: HTTPResponse
        var version: String
    }

    private let sink: any ResponseSink
    private var answer: Answer?
    /// Heads received, a redirect's included: more than one means a client the app passed in
    /// followed a redirect the engine never checked.
    private var visits = 0

    init(sink: any ResponseSink) {
        self.sink = sink
    }

    func didVisitURL(task: HTTPClient.Task<Answer>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        visits += 1
    }

    func didReceiveHead(task: HTTPClient.Task<Answer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        guard visits <= 1 else { return task.eventLoop.makeFailedFuture(TransportFault.followedRedirects) }
        let converted = AsyncHTTPClientTransport.head(status: head.status, headers: head.headers)
        do {
            try sink.begin(converted)
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        answer = Answer(head: converted, version: AsyncHTTPClientTransport.versionName(head.version))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Answer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        do {
            try buffer.withUnsafeReadableBytes { try sink.write($0) }
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Answer>) throws -> Answer {
        guard let answer else { throw TransportFault.emptyResponse }
        return answer
    }
}
