import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Runway
import RunwayDemoServer
@testable import RunwayNIO
import RunwayTestSupport
import Testing

/// Where the AsyncHTTPClient transport runs an exchange whose answer is kept in memory: its task
/// is made on the host's event loop (a less busy one while others run), once the loop takes it.
@Suite("AsyncHTTPClient transport: an API call's exchange on its event loop", .timeLimit(.minutes(10)))
struct EventLoopAffinityTests {
    /// Notes the event loop each head arrives on.
    final class LoopRecordingSink: ResponseSink {
        let loops = NIOLockedValueBox<[ObjectIdentifier?]>([])

        func begin(_ head: HTTPResponse) throws {
            let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
            loops.withLockedValue { $0.append(loop) }
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {}
    }

    /// A request for `path` as the engine sends an API call: its collector, here `sink`, keeps
    /// the answer in memory.
    func request(
        _ server: DemoServer, _ path: String, sink: any ResponseSink, cancellation: LoadCancellation? = nil
    ) -> TransportRequest {
        var request = TransportRequest(
            head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path),
            content: nil, timeout: .seconds(300), apiName: "Affinity", responseSink: sink)
        request.sinkKeepsInMemory = true
        request.cancellation = cancellation
        return request
    }

    /// Sends `count` exchanges to gate `gate` at once, opens it once `heldAtServer` of them wait
    /// there, and expects every one answered.
    func sendThroughGate(
        _ count: Int, _ gate: String, heldAtServer: Int, _ server: DemoServer, _ transport: AsyncHTTPClientTransport,
        sink: any ResponseSink
    ) async throws {
        let waiting = server.probe.count(of: .gateWaiting)
        try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for _ in 0..<count {
                let request = request(server, "/faults/gate/\(gate)", sink: sink)
                group.addTask { try await transport.send(request).head.status }
            }
            await server.probe.wait(for: .gateWaiting, count: waiting + heldAtServer)
            server.probe.openGate(gate)
            for try await status in group { #expect(status == .ok) }
        }
    }

    @Test("every exchange with one host is handed its answer on the same event loop, however many loops the group has")
    func oneLoopPerHost() async throws {
        try await withServerAndTransport { server, transport in
            let sink = LoopRecordingSink()
            for index in 0..<8 {
                let answer = try await transport.send(request(server, "/echo/\(index)", sink: sink))
                #expect(answer.head.status == .ok)
            }
            let loops = sink.loops.withLockedValue { $0 }
            #expect(loops.count == 8)
            #expect(loops.allSatisfy { $0 != nil }, "the answer is handed over on an event loop")
            // Asked for no loop in particular, AsyncHTTPClient takes the group's loops in turn
            // (the singleton group has one per core).
            #expect(Set(loops).count == 1, "one loop for the host: \(Set(loops).count) were used")
        }
    }

    @Test("exchanges with one host in flight at once are spread over the group's loops")
    func spreadWhenConcurrent() async throws {
        try await withServerAndTransport { server, transport in
            let sink = LoopRecordingSink()
            // Both wait at the server, so both are in flight at once.
            try await sendThroughGate(2, "both", heldAtServer: 2, server, transport, sink: sink)
            let loops = sink.loops.withLockedValue { $0 }
            let available = Array(MultiThreadedEventLoopGroup.singleton.makeIterator()).count
            #expect(loops.count == 2)
            #expect(Set(loops).count == min(2, available), "two exchanges at once on \(Set(loops).count) of \(available) loops")
        }
    }

    /// Counts the connections made and, per event loop, the reads on its stack now: a handler
    /// first in each connection's pipeline marks the loop while the bytes it read go through.
    final class ReadMarks: Sendable {
        let reading = NIOLockedValueBox<[ObjectIdentifier: Int]>([:])
        let connections = NIOLockedValueBox(0)

        /// The marking handler, put first in each new connection's pipeline.
        final class Marker: ChannelInboundHandler, Sendable {
            typealias InboundIn = NIOAny
            let marks: ReadMarks

            init(_ marks: ReadMarks) { self.marks = marks }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                let loop = ObjectIdentifier(context.eventLoop)
                marks.reading.withLockedValue { $0[loop, default: 0] += 1 }
                context.fireChannelRead(data)
                marks.reading.withLockedValue { $0[loop, default: 1] -= 1 }
            }
        }

        /// `configuration`, with every new connection marked.
        func marking(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
            var configuration = configuration
            configuration.http1_1ConnectionDebugInitializer = { channel in
                self.connections.withLockedValue { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Marker(self), position: .first)
                }
            }
            return configuration
        }

        /// Whether the calling thread is an event loop inside one of its connections' reads.
        var insideARead: Bool {
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return false }
            return reading.withLockedValue { ($0[ObjectIdentifier(loop)] ?? 0) > 0 }
        }
    }

    /// Notes, for each head, whether it was handed over inside the read of its connection.
    final class ReadCheckingSink: ResponseSink {
        let marks: ReadMarks
        let insideRead = NIOLockedValueBox<[Bool]>([])

        init(_ marks: ReadMarks) { self.marks = marks }

        func begin(_ head: HTTPResponse) throws {
            let inside = marks.insideARead
            insideRead.withLockedValue { $0.append(inside) }
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {}
    }

    /// AsyncHTTPClient hands a waiting request to the first connection that is free, on any
    /// loop; with one client for the group, the answer of one that met a connection on another
    /// loop was carried over to its own loop (a trip to another thread for the head, the body,
    /// the end). The transport's own clients, one per loop, keep each answer where it was read.
    @Test("with more exchanges in flight than connections, every answer is handed over inside its connection's read")
    func answersStayOnTheirConnectionsLoop() async throws {
        let server = try await DemoServer.start()
        let marks = ReadMarks()
        let connections = AsyncHTTPClientTransport.Connections(maximumConnectionsPerHost: 4)
        let configuration = marks.marking(AsyncHTTPClientTransport.clientConfiguration(connections))
        let shared = SharedClient { SharedClient.Made(perLoop: configuration, connections: 4) }
        let transport = AsyncHTTPClientTransport(shared: shared, owned: true, connections: connections)
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            let sink = ReadCheckingSink(marks)
            let exchanges = 32
            // As many wait at the server as there are connections; the rest wait for one.
            try await sendThroughGate(exchanges, "queued", heldAtServer: 4, server, transport, sink: sink)
            let inside = sink.insideRead.withLockedValue { $0 }
            #expect(inside.count == exchanges)
            let carried = inside.filter { !$0 }.count
            #expect(carried == 0, "\(carried) of \(exchanges) answers were carried to another loop")
            #expect(marks.connections.withLockedValue { $0 } <= 4, "the loops share the host's connections")
        }
    }

    /// Each loop's client keeps its own share of a host's connections, so a host's exchanges
    /// must spread over the loops by their own count: placed by the count of every host's,
    /// a host could find the loop another host keeps busy free of its own and use one loop's
    /// share of its connections.
    @Test("a host's exchanges in flight spread over the loops, whatever another host keeps busy")
    func spreadPerHost() async throws {
        let transport = AsyncHTTPClientTransport()
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        // Another host, three exchanges: one loop busier than another.
        let busy = (0..<3).compactMap { _ in transport.startExchange(with: "busy.example:443", on: loops) }
        for host in 0..<20 {
            let authority = "host\(host).example:443"
            let placed = loops.compactMap { _ in transport.startExchange(with: authority, on: loops)?.index }
            #expect(Set(placed).count == loops.count, "\(authority) placed on loops \(placed)")
            for index in placed { transport.finish(on: index, with: authority) }
        }
        for exchange in busy { transport.finish(on: exchange.index, with: "busy.example:443") }
        try await transport.shutdown()
    }

    @Test("an exchange cancelled before its task is made on the event loop is never sent")
    func cancelledBeforeTheLoop() async throws {
        try await withServerAndTransport { server, transport in
            let cancelled = LoadCancellation()
            cancelled.cancel()
            await #expect(throws: RunwayError.cancelled) {
                try await transport.send(request(server, "/echo/once", sink: LoopRecordingSink(), cancellation: cancelled))
            }
            let answer = try await transport.send(
                request(server, "/echo/once", sink: LoopRecordingSink(), cancellation: LoadCancellation()))
            #expect(answer.head.status == .ok)
            #expect(server.probe.count("/echo") == 1, "only the exchange that was not cancelled reached the server")
        }
    }
}
