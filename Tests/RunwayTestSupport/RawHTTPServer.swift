import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback server that answers every request with exactly the bytes a test chose: for the
/// answers no well-behaved server library would send (a 1xx before the final answer, framing
/// that lies, a head cut mid-field, bytes that are not HTTP at all).
///
/// It reads each request's head (up to the blank line; a body is read and ignored), writes
/// ``Answer/bytes`` and then closes the connection, or holds it open without another byte.
public final class RawHTTPServer: Sendable {
    /// What the server does for one request.
    public struct Answer: Sendable {
        public var bytes: [UInt8]
        /// Keep the connection open, silent, after the bytes (until the client gives up).
        public var holdOpen: Bool
        /// How many bytes of the request's body to take before answering: an answer that
        /// comes, and a connection that closes, while the body is being sent.
        public var afterBodyBytes: Int

        public init(_ bytes: [UInt8], holdOpen: Bool = false, afterBodyBytes: Int = 0) {
            self.bytes = bytes
            self.holdOpen = holdOpen
            self.afterBodyBytes = afterBodyBytes
        }

        public init(_ text: String, holdOpen: Bool = false, afterBodyBytes: Int = 0) {
            self.init(Array(text.utf8), holdOpen: holdOpen, afterBodyBytes: afterBodyBytes)
        }
    }

    public let port: Int
    private let channel: any Channel
    private let served: NIOLockedValueBox<Int>
    private let headLog: NIOLockedValueBox<[String]>

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// How many requests got an answer.
    public var requestCount: Int { served.withLockedValue { $0 } }

    /// The heads of the requests received so far (up to their blank line), in order.
    public var heads: [String] { headLog.withLockedValue { $0 } }

    /// Starts a server on 127.0.0.1 (an ephemeral port) that answers each request with what
    /// `answer` returns for its request line (`GET /path HTTP/1.1`).
    public static func start(answer: @escaping @Sendable (_ requestLine: String) -> Answer) async throws -> RawHTTPServer {
        try await startAnsweringHeads { head in answer(String(head.unicodeScalars.prefix { $0 != "\r" })) }
    }

    /// Starts a server that answers each request with what `answer` returns for its whole head
    /// (the request line and the fields, up to the blank line): for answers that depend on a
    /// field the client sent, as a `Range` does.
    public static func startAnsweringHeads(_ answer: @escaping @Sendable (_ head: String) -> Answer) async throws -> RawHTTPServer {
        let counter = NIOLockedValueBox(0)
        let heads = NIOLockedValueBox<[String]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Handler(answer: answer, counter: counter, heads: heads))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawHTTPServer(channel: channel, port: channel.localAddress?.port ?? 0, counter: counter, heads: heads)
    }

    private init(channel: any Channel, port: Int, counter: NIOLockedValueBox<Int>, heads: NIOLockedValueBox<[String]>) {
        self.channel = channel
        self.port = port
        self.served = counter
        self.headLog = heads
    }

    /// Stops listening (connections held open are closed by their clients).
    public func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let answer: @Sendable (String) -> Answer
        let counter: NIOLockedValueBox<Int>
        let heads: NIOLockedValueBox<[String]>
        var received: [UInt8] = []
        var answered = false
        /// The answer chosen when the head ended, and the body bytes since.
        var chosen: Answer?
        var bodyBytes = 0

        init(
            answer: @escaping @Sendable (String) -> Answer, counter: NIOLockedValueBox<Int>, heads: NIOLockedValueBox<[String]>
        ) {
            self.answer = answer
            self.counter = counter
            self.heads = heads
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            guard !answered else { return }
            if chosen == nil {
                received.append(contentsOf: buffer.readableBytesView)
                let marker: [UInt8] = [13, 10, 13, 10]
                guard received.count >= 4,
                    let end = (0...(received.count - 4)).first(where: { Array(received[$0..<$0 + 4]) == marker })
                else {
                    // A head that never ends is refused by closing, past a bound.
                    if received.count > 64 * 1024 { context.close(promise: nil) }
                    return
                }
                let head = String(decoding: received[..<end], as: UTF8.self)
                heads.withLockedValue { $0.append(head) }
                chosen = answer(head)
                bodyBytes = received.count - (end + 4)
            } else {
                bodyBytes += buffer.readableBytes
            }
            guard let chosen, bodyBytes >= chosen.afterBodyBytes else { return }
            answered = true
            counter.withLockedValue { $0 += 1 }
            let out = context.channel.allocator.buffer(bytes: chosen.bytes)
            let channel = context.channel
            let written = context.writeAndFlush(wrapOutboundOut(out))
            if !chosen.holdOpen {
                written.whenComplete { _ in channel.close(promise: nil) }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
