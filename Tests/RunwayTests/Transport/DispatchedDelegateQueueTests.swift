#if canImport(FoundationNetworking)
import Dispatch
import Foundation
import FoundationNetworking
import HTTPTypes
@testable import Runway
import RunwayDemoServer
import RunwayTestSupport
import Synchronization
import Testing

/// The delegate queue of ``URLSessionTransport``'s session on Linux.
///
/// One test at a time: a session held at its room sets aside calls into every session of the
/// process, so a test holding one would change what another sees of calls made "otherwise".
@Suite("URLSession transport: the delegate queue on Linux", .serialized, .timeLimit(.minutes(2)))
struct DispatchedDelegateQueueTests {
    /// What the blocks saw: the order they ran in, and whether two ever ran at once.
    struct Seen {
        var order: [Int] = []
        var running = false
        var overlapped = false
        /// What the blocks' work added up to (kept, so that the work is done).
        var sum = 0
    }

    @Test("the session calls its delegate on the dispatched queue")
    func sessionUsesIt() {
        let transport = URLSessionTransport()
        #expect(transport.session.delegateQueue is DispatchedDelegateQueue)
    }

    @Test("blocks run one at a time, in the order they were added")
    func serialAndInOrder() async {
        let queue = DispatchedDelegateQueue()
        let seen = Mutex(Seen())
        let count = 5_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for n in 0..<count {
                queue.addOperation {
                    seen.withLock {
                        if $0.running { $0.overlapped = true }
                        $0.running = true
                    }
                    // A little work between the marks, so that blocks run at once would overlap.
                    var spin = 0
                    for step in 0..<200 { spin &+= step }
                    seen.withLock {
                        $0.order.append(n)
                        $0.sum &+= spin
                        $0.running = false
                    }
                    if n == count - 1 { done.resume() }
                }
            }
        }
        let (order, overlapped) = seen.withLock { ($0.order, $0.overlapped) }
        #expect(!overlapped)
        #expect(order.count == count)
        #expect(order.indices.first { order[$0] != $0 } == nil, "the first block out of its place")
    }

    /// A sink that holds the delegate queue on its first chunk until ``open()``, then keeps
    /// every byte's count — or, when it ``refuses``, throws instead.
    final class HeldSink: ResponseSink, Sendable {
        /// What a refusing sink throws: a full disk, as a download's file reports it.
        static let refusal = "writing blob.part failed: no space left on device"
        let refuses: Bool
        private let gate = DispatchSemaphore(value: 0)
        private let received = Mutex(0)
        private let held = Mutex(false)

        init(refuses: Bool) {
            self.refuses = refuses
        }

        var bytes: Int { received.withLock { $0 } }

        func open() { gate.signal() }

        func begin(_ head: HTTPResponse) throws {}

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            let first = held.withLock { held in
                defer { held = true }
                return !held
            }
            if first { gate.wait() }
            if refuses { throw RunwayError.transport(description: Self.refusal) }
            received.withLock { $0 += bytes.count }
        }
    }

    /// What the queue reported during one download, and how many callbacks waited the first
    /// time the session found it full.
    struct Watched {
        var mostWaiting = 0
        var fullAt: Int?
        var gaveUp = 0
    }

    /// Downloads `size` bytes of the demo server's blob over a new ``URLSessionTransport`` into
    /// `sink`, whose first chunk holds the delegate queue. The first time the session finds the
    /// queue full (or, were no room kept, once more than ``DispatchedDelegateQueue/room``
    /// callbacks wait), the sink is opened — by the session's own thread, in the report, so that
    /// nothing else need run meanwhile. Returns what the queue reported and the outcome.
    func download(
        _ size: Int, into sink: HeldSink, patience: TimeInterval
    ) async throws -> (Watched, Result<TransportResponse, any Error>) {
        let server = try await DemoServer.start()
        return try await withCleanup({ await server.stop() }) {
            let transport = URLSessionTransport()
            let queue = try #require(transport.session.delegateQueue as? DispatchedDelegateQueue)
            let watched = Mutex(Watched())
            let opened = Mutex(false)
            @Sendable func openOnce() {
                let first = opened.withLock { opened in
                    defer { opened = true }
                    return !opened
                }
                if first { sink.open() }
            }
            queue.watch(patience: patience) { event in
                let reached = watched.withLock { watched -> Bool in
                    switch event {
                    case .added(let waiting):
                        watched.mostWaiting = max(watched.mostWaiting, waiting)
                        return waiting > DispatchedDelegateQueue.room
                    case .full:
                        watched.fullAt = watched.fullAt ?? watched.mostWaiting
                        return true
                    case .gaveUp:
                        watched.gaveUp += 1
                        return false
                    case .callSetAside:
                        return false
                    }
                }
                guard reached else { return }
                openOnce()
            }
            let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                                   path: "/files/blob?size=\(size)")
            let request = TransportRequest(head: head, content: nil, timeout: .seconds(600), apiName: "blob",
                                           responseSink: sink)
            let outcome = await Task { try await transport.send(request) }.result
            return (watched.withLock { $0 }, outcome)
        }
    }

    @Test("a delegate that falls behind holds the session back: no more than its room of callbacks wait")
    func roomBoundsWaitingChunks() async throws {
        // 2,048 of the 16 KiB chunks libcurl hands the session here: twice the room.
        let size = 32 << 20
        let sink = HeldSink(refuses: false)
        // The session's patience a minute, not 5 s: a starved machine must not end its wait.
        let (watched, outcome) = try await download(size, into: sink, patience: 60)
        // Held on its first chunk, the delegate fell behind: the session stopped at the room.
        #expect(watched.fullAt == DispatchedDelegateQueue.room)
        #expect(watched.mostWaiting <= DispatchedDelegateQueue.room, "at most \(DispatchedDelegateQueue.room)")
        #expect(watched.gaveUp == 0)
        let response = try outcome.get()
        #expect(response.head.status == .ok)
        #expect(sink.bytes == size, "every byte arrived once the delegate caught up")
    }

    @Test("a callback that cancels its task while the session waits for room ends the exchange without waiting for it")
    func cancelWhileFullDoesNotWaitForTheSession() async throws {
        let sink = HeldSink(refuses: true)
        // Were the callback's cancellation to wait for the session (as it did when cancelled
        // inline), the session, waiting for room, would give up after a minute: a wait for
        // the delegate queue to take one callback that nothing else comes near.
        let (watched, outcome) = try await download(32 << 20, into: sink, patience: 60)
        #expect(watched.fullAt == DispatchedDelegateQueue.room)
        #expect(watched.gaveUp == 0)
        let error = #expect(throws: RunwayError.self) { try outcome.get() }
        #expect(error.map { "\($0)" }?.contains(HeldSink.refusal) == true, "the sink's own error: \(String(describing: error))")
    }

    @Test("a call into a session made while one waits for room goes to that session's own queue; one made otherwise runs at once")
    func callsWhileHeldAreSetAside() async throws {
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            let transport = URLSessionTransport()
            let queue = transport.callbacks
            let sink = HeldSink(refuses: false)
            // What `callSession` did with the call made before (0) and the one made while held
            // (1): whether it ran on the thread that made it, at once — or on another, set
            // aside. (Whether it had run by the time `callSession` returned says nothing: on a
            // busy machine a set-aside call can run before its maker's next line.)
            let ranAtOnce = Mutex<[Int: Bool]>([:])
            // The same for a call into another session made while this one is held: every
            // session's work queue waits with this one's (they share one serial queue).
            let other = URLSessionTransport().callbacks
            let otherRanAtOnce = Mutex<Bool?>(nil)
            let opened = Mutex(false)
            @Sendable func call(_ index: Int) {
                let maker = pthread_self()
                queue.callSession {
                    let here = pthread_equal(pthread_self(), maker) != 0
                    ranAtOnce.withLock { $0[index] = here }
                }
            }
            call(0)
            queue.watch(patience: 60) { event in
                guard case .full = event else { return }
                let first = opened.withLock { opened in
                    defer { opened = true }
                    return !opened
                }
                guard first else { return }
                // The session is held from here until the sink opens: a call made now (here,
                // on the session's own thread, so that nothing else need run) is set aside.
                call(1)
                let maker = pthread_self()
                other.callSession { otherRanAtOnce.withLock { $0 = pthread_equal(pthread_self(), maker) != 0 } }
                sink.open()
            }
            // Twice the room: the session finds the queue full.
            let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                                   path: "/files/blob?size=\(32 << 20)")
            let request = TransportRequest(head: head, content: nil, timeout: .seconds(600), apiName: "blob",
                                           responseSink: sink)
            let response = try await transport.send(request)
            #expect(response.head.status == .ok)
            // The session's own queue has run what was set aside.
            queue.sessionCalls.sync {}
            other.sessionCalls.sync {}
            #expect(ranAtOnce.withLock { $0 } == [0: true, 1: false], "at once before; set aside while held")
            #expect(otherRanAtOnce.withLock { $0 } == false, "another session's call set aside while this one is held")
        }
    }

    /// Every URLSession of the process waits while one waits for room (their work queues share
    /// one serial queue: ``DispatchedDelegateQueue``), so a delegate that is only behind must
    /// hold back nothing: here 256 callbacks and more wait for a held sink — twice the room this
    /// queue once kept — while a load on another session comes and goes.
    @Test("a delegate behind by less than its room holds back no session: another session's load completes meanwhile")
    func behindBelowTheRoomHoldsNothing() async throws {
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            let transport = URLSessionTransport()
            let queue = transport.callbacks
            let sink = HeldSink(refuses: false)
            let (behind, signal) = AsyncStream<Void>.makeStream()
            let full = Mutex(false)
            queue.watch(patience: 60) { event in
                switch event {
                case .added(let waiting) where waiting >= 256: signal.yield()
                case .full:
                    full.withLock { $0 = true }
                    signal.yield()
                default: break
                }
            }
            let size = 8 << 20  // 512 chunks: half the room
            func blob(_ size: Int) -> HTTPRequest {
                HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/files/blob?size=\(size)")
            }
            let download = Task {
                try await transport.send(
                    TransportRequest(head: blob(size), content: nil, timeout: .seconds(600), apiName: "blob", responseSink: sink))
            }
            for await _ in behind { break }
            let wasFull = full.withLock { $0 }
            #expect(!wasFull, "the session waited for room below it")
            if !wasFull {
                // The sink is still held: the other session's load completes all the same. (A
                // failure is recorded, not thrown, so that the held sink is opened below.)
                do {
                    let other = try await URLSessionTransport().send(
                        TransportRequest(head: blob(100), body: nil, timeout: .seconds(60), apiName: "small"))
                    #expect(other.head.status == .ok)
                    #expect(other.body.count == 100)
                } catch {
                    Issue.record("the other session's load failed: \(error)")
                }
            }
            sink.open()
            let response = try await download.value
            #expect(response.head.status == .ok)
            #expect(sink.bytes == size)
        }
    }
}
#endif
