import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOPosix
import Runway
import RunwayDemoServer
import RunwayNIO
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
            let waiting = server.probe.count(of: .gateWaiting)
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<2 {
                    let request = request(server, "/faults/gate/both", sink: sink)
                    group.addTask { try await transport.send(request).head.status }
                }
                // Both wait at the server, so both are in flight at once.
                await server.probe.wait(for: .gateWaiting, count: waiting + 2)
                server.probe.openGate("both")
                for try await status in group { #expect(status == .ok) }
            }
            let loops = sink.loops.withLockedValue { $0 }
            let available = Array(MultiThreadedEventLoopGroup.singleton.makeIterator()).count
            #expect(loops.count == 2)
            #expect(Set(loops).count == min(2, available), "two exchanges at once on \(Set(loops).count) of \(available) loops")
        }
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
