import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One exchange in flight on a ``URLSessionTransport``'s session: the task's delegate callbacks
/// feed it, and it resumes the caller when the task completes.
///
/// Every request takes this one path — in-memory bodies, file uploads and downloads alike — so
/// that the head, every chunk of the body and the end reach the transport the same way, and a
/// sink that refuses the head or a chunk (the engine's size cap, a full disk) stops the task.
final class ExchangeTask: Sendable {
    private struct State {
        var head: HTTPResponse?
        var failure: (any Error)?
        /// A 401 whose HTTP challenge the session was told not to answer (Linux): the task was
        /// cancelled to end the challenge, and this response is its outcome.
        var challenged: HTTPURLResponse?
        /// The connection's certificates did not satisfy ``pins``: the task was cancelled.
        var refusedByPin = false
        /// The phases URLSession reported (Apple platforms; Linux's URLSession reports none).
        var timings = PhaseTimings()
        var continuation: CheckedContinuation<TransportResponse, any Error>?
    }

    /// Where the body goes: the request's sink, or a gathering kept here.
    private let sink: any ResponseSink
    private let gathering: BodyGathering?
    let uploadProgress: (@Sendable (Int64) -> Void)?
    /// The pins a new connection for this exchange must satisfy.
    let pins: PublicKeyPins?
    /// The task's handle: every cancellation of it goes through it.
    let handle: DataTaskHandle
    private let state = Locked(State())

    init(request: TransportRequest, handle: DataTaskHandle, continuation: CheckedContinuation<TransportResponse, any Error>) {
        (sink, gathering) = BodyGathering.destination(for: request, transportDecodes: true)
        self.uploadProgress = request.uploadProgress
        self.pins = request.pins
        self.handle = handle
        state.withLock { $0.continuation = continuation }
    }

    /// The head arrived: the sink decides whether the body is wanted.
    func begin(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else { return true }
        let head = URLSessionTransport.head(of: http)
        state.withLock { $0.head = head }
        return accept { try sink.begin(head) }
    }

    /// The next bytes of the body, to the sink.
    func receive(_ data: Data) -> Bool {
        accept { try data.withUnsafeBytes { try sink.write($0) } }
    }

    /// An HTTP authentication challenge that Runway does not answer: its 401 is the outcome.
    func challenged(by response: HTTPURLResponse) {
        state.withLock { $0.challenged = response }
    }

    /// The connection's certificates did not satisfy the pins; the task is being cancelled.
    func refusedByPin() {
        state.withLock { $0.refusedByPin = true }
    }

    /// URLSession's metrics of the task arrived (before it completes).
    func collected(_ metrics: URLSessionTaskMetrics) {
        let timings = Self.timings(of: metrics)
        state.withLock { $0.timings = timings }
    }

    /// The connection phases of the task's last transaction: waiting for a connection, DNS,
    /// connect, TLS and sending the request — or, on a reused connection, the setup skipped.
    static func timings(of metrics: URLSessionTaskMetrics) -> PhaseTimings {
        var timings = PhaseTimings()
        guard let last = metrics.transactionMetrics.last else { return timings }
        func between(_ start: Date?, _ end: Date?) -> Duration? {
            guard let start, let end, end >= start else { return nil }
            return .nanoseconds(Int64(end.timeIntervalSince(start) * 1e9))
        }
        if last.isReusedConnection {
            for phase in PhaseTimings.Phase.connectionSetup { timings.skip(phase) }
        } else {
            timings[.dns] = between(last.domainLookupStartDate, last.domainLookupEndDate)
            timings[.connect] = between(last.connectStartDate, last.secureConnectionStartDate ?? last.connectEndDate)
            timings[.tls] = between(last.secureConnectionStartDate, last.secureConnectionEndDate)
        }
        timings[.connectionWait] = between(
            last.fetchStartDate, last.domainLookupStartDate ?? last.connectStartDate ?? last.requestStartDate)
        timings[.send] = between(last.requestStartDate, last.requestEndDate)
        return timings
    }

    /// Runs `step` unless an earlier one refused: the session may hand on chunks it read before
    /// the task's cancellation took effect, and none may reach a sink that refused (a full disk
    /// is not written again; the engine's size cap counts nothing past the cap).
    ///
    /// - returns: `false` when `step` refused just now: the caller cancels the task.
    private func accept(_ step: () throws -> Void) -> Bool {
        if state.withLock({ $0.failure != nil }) { return true }
        do {
            try step()
            return true
        } catch {
            state.withLock { $0.failure = $0.failure ?? error }
            return false
        }
    }

    /// The task ended; the caller gets the response, or the first failure.
    func complete(response: URLResponse?, error: (any Error)?) {
        let (continuation, current) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state)
        }
        guard let continuation else { return }
        let head: HTTPResponse
        if current.refusedByPin, let pins {
            return continuation.resume(throwing: RunwayError(.pinMismatch(host: pins.host)))
        } else if let failure = current.failure {
            return continuation.resume(throwing: URLSessionTransport.classify(failure))
        } else if let challenged = current.challenged {
            head = current.head ?? URLSessionTransport.head(of: challenged)
        } else if let error {
            return continuation.resume(throwing: URLSessionTransport.classify(error))
        } else if let http = response as? HTTPURLResponse {
            head = current.head ?? URLSessionTransport.head(of: http)
        } else {
            return continuation.resume(throwing: RunwayError(.notHTTP))
        }
        guard let gathering else {
            return continuation.resume(returning: TransportResponse(head: head, body: Data(), timings: current.timings))
        }
        continuation.resume(
            with: Result {
                var response = try gathering.response(head: head, httpVersion: nil)
                response.timings = current.timings
                return response
            }.mapError(URLSessionTransport.classify))
    }
}

extension SessionDelegate: URLSessionDataDelegate {
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = exchange(dataTask.taskIdentifier) else {
            completionHandler(.allow)
            return
        }
        let wanted = exchange.begin(response)
        completionHandler(wanted ? .allow : .cancel)
        // Linux's URLSession ignores the disposition: cancel the task itself.
        if !wanted { exchange.handle.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(dataTask.taskIdentifier) else { return }
        if !exchange.receive(data) { exchange.handle.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(task.taskIdentifier)?.uploadProgress?(totalBytesSent)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        exchange(task.taskIdentifier)?.collected(metrics)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = removeExchange(task.taskIdentifier) else { return }
        exchange.complete(response: task.response, error: error)
    }
}

extension URLSessionTransport {
    /// Sends `request` as a session task whose callbacks all come to the delegate: the body from
    /// memory or from its file (a multipart form is first written to a temporary file, chunk by
    /// chunk, since a session task sends bytes or a file; on Linux the file goes as a body
    /// stream), the response body to the sink as it arrives.
    func exchange(
        _ request: TransportRequest, _ urlRequest: URLRequest, handle: DataTaskHandle
    ) async throws -> TransportResponse {
        guard let content = request.content, content.data == nil else {
            return try await send(request, urlRequest, uploadFile: nil, handle: handle)
        }
        if let file = content.file {
            return try await send(request, urlRequest, uploadFile: file, handle: handle)
        }
        // A copy of every file of the form, made and removed on a queue of its own, never a
        // thread of Swift's pool waiting for the disk.
        let spooled = try await BlockingWork.run { () throws(RunwayError) -> URL in
            let file = try UploadSpool.makeFile()
            do throws(RunwayError) {
                try content.write(to: file)
            } catch {
                try? FileManager.default.removeItem(at: file)
                throw error
            }
            return file
        }
        let sent: Result<TransportResponse, any Error>
        do {
            sent = .success(try await send(request, urlRequest, uploadFile: spooled, handle: handle))
        } catch {
            sent = .failure(error)
        }
        await BlockingWork.run { try? FileManager.default.removeItem(at: spooled) }
        return try sent.get()
    }

    /// Sends `request` as a session task, its body from memory, from `uploadFile`, or none.
    private func send(
        _ request: TransportRequest, _ urlRequest: URLRequest, uploadFile: URL?, handle: DataTaskHandle
    ) async throws -> TransportResponse {
        let bodyInMemory = request.content?.data
        #if canImport(FoundationNetworking)
        // Linux: the file goes as a body stream (see `streaming(_:file:length:)`).
        let streamed = try uploadFile.map { file throws(RunwayError) in
            try Self.streaming(urlRequest, file: file, length: request.content?.length ?? 0)
        }
        let fileToSend: URL? = nil
        #else
        let streamed: URLRequest? = nil
        let fileToSend = uploadFile
        #endif
        let session = self.session
        let delegate = self.delegate
        #if canImport(FoundationNetworking)
        let callbacks = self.callbacks
        #endif
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                // Making a task and resuming it each wait for the session's work queue.
                let begin: @Sendable () -> Void = {
                    let task: URLSessionDataTask
                    if let streamed {
                        task = session.dataTask(with: streamed)
                    } else if let fileToSend {
                        task = session.uploadTask(with: urlRequest, fromFile: fileToSend)
                    } else if let bodyInMemory, !bodyInMemory.isEmpty {
                        task = session.uploadTask(with: urlRequest, from: bodyInMemory)
                    } else {
                        task = session.dataTask(with: urlRequest)
                    }
                    delegate.register(
                        ExchangeTask(request: request, handle: handle, continuation: continuation), for: task.taskIdentifier)
                    handle.start(task)
                }
                #if canImport(FoundationNetworking)
                // Not here while a session waits for its delegate (any session's wait holds this
                // one's work queue): that wait would hold this thread, one of the few Swift's
                // tasks share.
                callbacks.callSession(begin)
                #else
                begin()
                #endif
            }
        } onCancel: {
            handle.cancel()
        }
    }
}
