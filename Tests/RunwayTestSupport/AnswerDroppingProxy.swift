import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 in front of an HTTP/1.1 server that records every request's
/// `Idempotency-Key` and loses the answer to every `dropEvery`-th request: the request reaches
/// the server (which applies it), and when the answer starts to come back the proxy closes both
/// connections instead of passing it on — the answer a train's tunnel eats.
///
/// Requests are numbered in the order their keys pass (one request at a time per connection, as
/// HTTP/1.1 clients without pipelining send them).
public final class AnswerDroppingProxy: Sendable {
    private let channel: any Channel
    /// The port it listens on.
    public let port: Int
    private let state: NIOLockedValueBox<State>

    struct State {
        /// Every key in the order its request passed.
        var keys: [String] = []
        /// The request numbers whose answers were dropped.
        var dropped: [String] = []
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every `Idempotency-Key` sent through, in order, repeats included.
    public var sentKeys: [String] { state.withLockedValue { $0.keys } }

    /// The keys whose answers were dropped, in order.
    public var droppedKeys: [String] { state.withLockedValue { $0.dropped } }

    /// Starts a proxy to `127.0.0.1:upstreamPort`.
    public static func start(to upstreamPort: Int, dropEvery: Int) async throws -> AnswerDroppingProxy {
        let state = NIOLockedValueBox(State())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                let connection = Connection(state: state, dropEvery: max(dropEvery, 1))
                let downstream = Relay(onRead: connection.fromClient)
                do {
                    try child.pipeline.syncOperations.addHandler(downstream)
                } catch {
                    return child.eventLoop.makeFailedFuture(error)
                }
                return ClientBootstrap(group: child.eventLoop)
                    .channelInitializer { upstream in
                        upstream.eventLoop.makeCompletedFuture {
                            let relay = Relay(onRead: connection.fromServer)
                            relay.attach(child)
                            try upstream.pipeline.syncOperations.addHandler(relay)
                        }
                    }
                    .connect(host: "127.0.0.1", port: upstreamPort)
                    .map { upstream in downstream.attach(upstream) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return AnswerDroppingProxy(channel: channel, port: channel.localAddress?.port ?? 0, state: state)
    }

    private init(channel: any Channel, port: Int, state: NIOLockedValueBox<State>) {
        self.channel = channel
        self.port = port
        self.state = state
    }

    /// Stops listening.
    public func stop() async {
        try? await channel.close()
    }

    /// One client connection: the keys of its requests, and whether the answer now coming back
    /// is one to lose.
    private final class Connection: @unchecked Sendable {
        let state: NIOLockedValueBox<State>
        let dropEvery: Int
        /// The request text not yet scanned for a complete header line.
        var pending = ""
        /// The number and key of the request whose answer comes next, once its key passed.
        var awaiting: (number: Int, key: String)?

        init(state: NIOLockedValueBox<State>, dropEvery: Int) {
            self.state = state
            self.dropEvery = dropEvery
        }

        /// Bytes from the client: notes each request's key. Always passed on.
        func fromClient(_ buffer: ByteBuffer) -> Bool {
            pending += String(decoding: buffer.readableBytesView, as: UTF8.self)
            while let end = pending.range(of: "\r\n") {
                let line = pending[pending.startIndex..<end.lowerBound]
                if let colon = line.firstIndex(of: ":"),
                    line[line.startIndex..<colon].lowercased() == "idempotency-key"
                {
                    let key = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    let number = state.withLockedValue { state in
                        state.keys.append(key)
                        return state.keys.count
                    }
                    awaiting = (number, key)
                }
                pending.removeSubrange(pending.startIndex..<end.upperBound)
            }
            return true
        }

        /// Bytes from the server: `false` (cut both connections) when they start the answer to a
        /// request whose number is a multiple of `dropEvery`.
        func fromServer(_ buffer: ByteBuffer) -> Bool {
            guard let request = awaiting else { return true }
            awaiting = nil
            guard request.number.isMultiple(of: dropEvery) else { return true }
            state.withLockedValue { $0.dropped.append(request.key) }
            return false
        }
    }

    /// Passes bytes to its partner channel, unless `onRead` says to cut: then both close. Bytes
    /// that arrive before the partner is connected wait for it. Everything runs on the
    /// connection's one event loop.
    private final class Relay: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private var partner: (any Channel)?
        private var waiting: [ByteBuffer] = []
        private var closed = false
        let onRead: (ByteBuffer) -> Bool

        init(onRead: @escaping (ByteBuffer) -> Bool) {
            self.onRead = onRead
        }

        /// Connects the relay to `channel`, passing on what arrived meanwhile.
        func attach(_ channel: any Channel) {
            partner = channel
            if closed {
                channel.close(promise: nil)
                return
            }
            for buffer in waiting { channel.write(buffer, promise: nil) }
            waiting = []
            channel.flush()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            guard onRead(buffer) else {
                context.close(promise: nil)
                partner?.close(promise: nil)
                return
            }
            if let partner {
                partner.writeAndFlush(buffer, promise: nil)
            } else {
                waiting.append(buffer)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed = true
            partner?.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
