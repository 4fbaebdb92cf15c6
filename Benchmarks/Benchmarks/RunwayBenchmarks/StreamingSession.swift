import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Runway

/// Raw URLSession as a client takes a body that it must be able to stop mid-way (a size cap, a
/// download to disk): a data task whose head, chunks and end come to the session's delegate,
/// on the session's own delegate queue (an `OperationQueue`), gathered in memory. URLSession's
/// `data(from:)` calls its completion inline with the whole body instead, and never calls a
/// delegate for a chunk: this is the floor of any URLSession client that streams, Runway's
/// transport among them — the profiling mode's `sessionstream` way.
final class StreamingSession: NSObject, URLSessionDataDelegate, Sendable {
    private struct Load {
        var body = Data()
        let continuation: CheckedContinuation<Data, any Error>
    }

    private let loads = NIOLockedValueBox<[Int: Load]>([:])
    private let session = NIOLockedValueBox<URLSession?>(nil)

    /// A session set up as Runway's transport sets up its own (no cache, no cookies, no
    /// credentials).
    override init() {
        super.init()
        let configuration = URLSessionTransport.sessionConfiguration()
        let made = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        session.withLockedValue { $0 = made }
    }

    /// The body of a GET of `url`.
    func load(_ url: URL) async throws -> Data {
        guard let session = session.withLockedValue({ $0 }) else { throw FixtureError.notStarted }
        return try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: url)
            loads.withLockedValue { $0[task.taskIdentifier] = Load(continuation: continuation) }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        loads.withLockedValue { $0[dataTask.taskIdentifier]?.body.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let load = loads.withLockedValue({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error { return load.continuation.resume(throwing: error) }
        load.continuation.resume(returning: load.body)
    }
}
