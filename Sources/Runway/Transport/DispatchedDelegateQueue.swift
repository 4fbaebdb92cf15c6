import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(FoundationNetworking)
/// A serial delegate queue that runs each of the session's callbacks as a plain block on one
/// serial dispatch queue, in the order they came — and, past a ceiling, holds the session back
/// until the delegate catches up, so that a delegate far behind cannot fill memory.
///
/// swift-corelibs-foundation hands every delegate callback to the session's queue with
/// `delegateQueue.addOperation { … }` (the head, each chunk of the body, the end, redirects and
/// challenges; read in its `URLSessionTask.swift`, `NativeProtocol.swift` and
/// `HTTPURLProtocol.swift`). An `OperationQueue` wraps each in a `BlockOperation` and runs its
/// key-value bookkeeping around it — three callbacks or more a load, where URLSession's own
/// `data(for:)` calls its completion inline, on the session's work queue, with none. A serial
/// dispatch queue keeps what the delegate relies on: one callback at a time, in order, never on
/// the session's work queue.
///
/// **Room.** libcurl hands each chunk of a body (16 KiB) to the session's work queue, which
/// adds it here and reads on: it cannot pause a transfer, so nothing but this queue stands
/// between a fast server and a delegate that writes to a slow disk or waits for the CPU. When
/// ``room`` callbacks wait, `addOperation` waits too (on the session's work queue, whose
/// transfers then stop reading: the sockets fill and TCP slows the servers) until the delegate
/// catches up. The room is a ceiling, not flow control, because that wait is not the session's
/// alone: in the Foundation of Swift 6.3 every session's work queue runs on one shared serial
/// queue (`org.swift.URLSession.SharedQueue`, named in `libFoundationNetworking.so`), so while
/// one session waits here every URLSession in the process waits with it — measured: a load on
/// `URLSession.shared` waited out a whole 256 MiB download into a sink that took 1 ms a chunk.
/// 1,024 callbacks (16 MiB of chunks) bounds what a delegate far behind leaves waiting (the
/// transfer tests' 48 MiB download to a delegate starved of CPU once peaked 44.7 MB over its
/// start with no ceiling), while a delegate behind by less holds back nothing.
/// AsyncHTTPClient's transport reads each connection with backpressure instead.
///
/// Nothing run on this queue may wait for the session's work queue, or the two would wait for
/// each other: Runway's delegate cancels tasks and answers challenges on a queue of the
/// session's own (``callSession(_:)``). As a guard against a wait nobody foresaw — an app's
/// progress callback that waits for a thread that waits for the session — the session waits at
/// most ``patience``, then adds its callbacks without waiting until a callback has run.
final class DispatchedDelegateQueue: OperationQueue, @unchecked Sendable {
    /// How many callbacks may wait before the session waits for room: 1,024 chunks, 16 MiB.
    static let room = 1_024
    /// The longest the session waits for room at one time.
    static let patience: TimeInterval = 5

    /// What the queue reports to a watcher (tests).
    enum Event: Sendable {
        /// A callback was added; `waiting` callbacks (it among them) now wait to run.
        case added(waiting: Int)
        /// The session found no room and is waiting for it.
        case full
        /// The session waited ``patience`` and added its callback without room (and adds the
        /// next ones so until a callback has run).
        case gaveUp
        /// A call into the session went to ``sessionCalls`` (``callSession(_:)``).
        case callSetAside
    }

    private let serial = DispatchQueue(label: "runway.urlsession.delegate")
    /// Set on ``serial``, so that a callback added from a callback never waits for itself.
    private let onSerial = DispatchSpecificKey<Bool>()
    /// Guards the five below; the session waits on it for room.
    private let books = NSCondition()
    private var waiting = 0
    private var sessionWaits = 0
    /// The session waited ``patience`` in vain, and no callback has run since.
    private var stuck = false
    private var watcher: (@Sendable (Event) -> Void)?
    private var patience = DispatchedDelegateQueue.patience

    override init() {
        super.init()
        // Anything given as an `Operation` rather than a block still runs one at a time.
        maxConcurrentOperationCount = 1
        serial.setSpecific(key: onSerial, value: true)
    }

    /// Where calls that wait for this session's work queue go when they cannot wait where they
    /// are made: from a callback (the work queue may be waiting for this queue), or from
    /// anywhere while a session waits for room (the call would wait for that delegate too). One
    /// queue per session, so that one session's calls keep their order without waiting behind
    /// another's.
    let sessionCalls = DispatchQueue(label: "runway.urlsession.calls")

    /// How many sessions of the process wait for room now. Any one of them holds every
    /// session's work queue (they share one serial queue: the type's documentation), so a call
    /// into this session waits for it too.
    private static let sessionsWaiting = Locked(0)

    /// Runs `call`, which waits for the session's work queue (making, resuming or cancelling a
    /// task, answering a challenge), at once — or on ``sessionCalls`` when made from a callback
    /// or while any session waits for room.
    func callSession(_ call: @escaping @Sendable () -> Void) {
        let fromCallback = DispatchQueue.getSpecific(key: onSerial) == true
        let held = Self.sessionsWaiting.withLock { $0 } > 0
        books.lock()
        let watch = watcher
        books.unlock()
        guard fromCallback || held else { return call() }
        watch?(.callSetAside)
        sessionCalls.async(execute: call)
    }

    /// Reports every callback added and every wait to `watch`, on the thread that added it, and
    /// waits for room at most `patience` at a time (tests).
    func watch(patience: TimeInterval = DispatchedDelegateQueue.patience, _ watch: @escaping @Sendable (Event) -> Void) {
        books.lock()
        watcher = watch
        self.patience = patience
        books.unlock()
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        let fromCallback = DispatchQueue.getSpecific(key: onSerial) == true
        var gaveUp = false
        books.lock()
        let watch = watcher
        if !fromCallback, !stuck, waiting >= Self.room {
            sessionWaits += 1
            Self.sessionsWaiting.withLock { $0 += 1 }
            if let watch {
                books.unlock()
                watch(.full)
                books.lock()
            }
            let deadline = Date(timeIntervalSinceNow: patience)
            while waiting >= Self.room, !gaveUp {
                gaveUp = !books.wait(until: deadline)
            }
            sessionWaits -= 1
            Self.sessionsWaiting.withLock { $0 -= 1 }
            stuck = gaveUp
        }
        waiting += 1
        let now = waiting
        books.unlock()
        if gaveUp { watch?(.gaveUp) }
        watch?(.added(waiting: now))
        serial.async { [self] in
            block()
            books.lock()
            waiting -= 1
            stuck = false
            if sessionWaits > 0 { books.signal() }
            books.unlock()
        }
    }
}
#endif
