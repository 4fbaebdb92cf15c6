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

        public init(_ bytes: [UInt8], holdOpen: Bool = false) {
            self.bytes = bytes
            self.holdOpen = holdOpen
        }

        public init(_ text: String, holdOpen: Bool = false) {
            self.init(Array(text.utf8), holdOpen: holdOpen)
        }
    }

    public let port: Int
    private let channel: any Channel
    private let served: NIOLockedValueBox<Int>

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// How many requests got an answer.
    public var requestCount: Int { served.withLockedValue { $0 } }

    /// Starts a server on 127.0.0.1 (an ephemeral port) that answers each request with what
    /// `answer` returns for its request line (`GET /path HTTP/1.1`).
    public static func start(answer: @escaping @Sendable (_ requestLine: String) -> Answer) async throws -> RawHTTPServer {
        let counter = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Handler(answer: answer, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawHTTPServer(channel: channel, port: channel.localAddress?.port ?? 0, counter: counter)
    }

    private init(channel: any Channel, port: Int, counter: NIOLockedValueBox<Int>) {
        self.channel = channel
        self.port = port
        self.served = counter
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
        var received: [UInt8] = []
        var answered = false

        init(answer: @escaping @Sendable (String) -> Answer, counter: NIOLockedValueBox<Int>) {
            self.answer = answer
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            guard !answered else { return }
            received.append(contentsOf: buffer.readableBytesView)
            let marker: [UInt8] = [13, 10, 13, 10]
            guard received.count >= 4,
                (0...(received.count - 4)).contains(where: { Array(received[$0..<$0 + 4]) == marker })
            else {
                // A head that never ends is refused by closing, past a bound.
                if received.count > 64 * 1024 { context.close(promise: nil) }
                return
            }
            answered = true
            let line = String(decoding: received.prefix { $0 != 13 }, as: UTF8.self)
            let chosen = answer(line)
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
