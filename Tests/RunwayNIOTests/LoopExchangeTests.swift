import AsyncHTTPClient
import Runway
import RunwayDemoServer
import RunwayTestSupport
import Testing

@testable import RunwayNIO

/// The hand-over of an exchange to the event loop that makes its task.
@Suite("AsyncHTTPClient transport: an exchange waiting for its event loop", .timeLimit(.minutes(10)))
struct LoopExchangeTests {
    @Test("a cancel before the loop takes the exchange resumes its caller at once, and the loop then makes nothing")
    func cancelWhileWaiting() async {
        let exchange = LoopExchange()
        // The loop never runs the work (as one shut down under an app's client would drop it):
        // the load's deadline or cancellation still ends the wait.
        await #expect(throws: HTTPClientError.cancelled) {
            _ = try await withCheckedThrowingContinuation { (continuation: LoopExchange.Waiting) in
                exchange.wait(on: continuation)
                exchange.cancel()
            }
        }
        #expect(exchange.take() == nil, "a loop that runs the work late finds nothing to send")
    }

    @Test("an exchange cancelled before its caller waits resumes the caller as it starts waiting")
    func cancelledBeforeWaiting() async {
        let exchange = LoopExchange()
        exchange.cancel()
        await #expect(throws: HTTPClientError.cancelled) {
            _ = try await withCheckedThrowingContinuation { (continuation: LoopExchange.Waiting) in
                exchange.wait(on: continuation)
            }
        }
        #expect(exchange.take() == nil)
    }

    @Test("an exchange whose task ended has let the task go on its loop by the time its caller resumes")
    func endedTaskLetGo() async throws {
        try await withServerAndClient { server, client in
            let exchange = LoopExchange()
            let loop = client.eventLoopGroup.next()
            let request = try HTTPClient.Request(url: "http://127.0.0.1:\(server.port)/echo/ended")
            let delegate = SinkDelegate(sink: BodyCollector())
            let answer = try await withCheckedThrowingContinuation { (continuation: LoopExchange.Waiting) in
                exchange.wait(on: continuation)
                loop.execute {
                    exchange.start { client.execute(request: request, delegate: delegate, eventLoop: .delegate(on: loop)) }
                }
            }
            #expect(answer.head.status == .ok)
            // Its teardown ran on the loop, not in the caller's turn after the answer.
            #expect(!exchange.holdsTask)
        }
    }
}
