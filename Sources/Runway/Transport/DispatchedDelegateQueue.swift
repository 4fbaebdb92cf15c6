import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The queue the session calls its delegate on: URLSession's own on Apple platforms, a
    /// ``DispatchedDelegateQueue`` on Linux.
    static func delegateQueue() -> OperationQueue? {
        #if canImport(FoundationNetworking)
        DispatchedDelegateQueue()
        #else
        nil
        #endif
    }
}

#if canImport(FoundationNetworking)
/// A serial delegate queue that runs each of the session's callbacks as a plain block on one
/// serial dispatch queue, in the order they came.
///
/// swift-corelibs-foundation hands every delegate callback to the session's queue with
/// `delegateQueue.addOperation { … }` (the head, each chunk of the body, the end, redirects and
/// challenges; read in its `URLSessionTask.swift`, `NativeProtocol.swift` and
/// `HTTPURLProtocol.swift`). An `OperationQueue` wraps each in a `BlockOperation` and runs its
/// key-value bookkeeping around it — three callbacks or more a load, where URLSession's own
/// `data(for:)` calls its completion inline, on the session's work queue, with none. A serial
/// dispatch queue keeps what the delegate relies on: one callback at a time, in order, never on
/// the session's work queue (a callback that cancels its task waits on that queue).
final class DispatchedDelegateQueue: OperationQueue, @unchecked Sendable {
    private let serial = DispatchQueue(label: "runway.urlsession.delegate")

    override init() {
        super.init()
        // Anything given as an `Operation` rather than a block still runs one at a time.
        maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        serial.async(execute: block)
    }
}
#endif
