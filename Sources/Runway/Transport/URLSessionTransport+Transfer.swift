import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One upload or download in flight on a ``URLSessionTransport``'s session: the task's delegate
/// callbacks feed it, and it resumes the caller when the task completes.
final class TransferTask: Sendable {
    private struct State {
        var body = Data()
        var failure: (any Error)?
        var continuation: CheckedContinuation<TransportResponse, any Error>?
    }

    let sink: (any ResponseSink)?
    let uploadProgress: (@Sendable (Int64) -> Void)?
    private let state = Locked(State())

    init(request: TransportRequest, continuation: CheckedContinuation<TransportResponse, any Error>) {
        self.sink = request.responseSink
        self.uploadProgress = request.uploadProgress
        state.withLock { $0.continuation = continuation }
    }

    /// The head arrived: the sink decides whether the body is wanted.
    func begin(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse, let sink else { return true }
        do {
            try sink.begin(URLSessionTransport.head(of: http))
            return true
        } catch {
            state.withLock { $0.failure = $0.failure ?? error }
            return false
        }
    }

    /// The next bytes of the body: to the sink, or kept.
    func receive(_ data: Data) -> Bool {
        guard let sink else {
            state.withLock { $0.body.append(data) }
            return true
        }
        do {
            try data.withUnsafeBytes { try sink.write($0) }
            return true
        } catch {
            state.withLock { $0.failure = $0.failure ?? error }
            return false
        }
    }

    /// The task ended; the caller gets the response, or the first failure.
    func complete(response: URLResponse?, error: (any Error)?, classify: (any Error) -> RunwayError) {
        let (continuation, body, failure) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.body, state.failure)
        }
        guard let continuation else { return }
        if let failure {
            continuation.resume(throwing: failure)
        } else if let error {
            continuation.resume(throwing: classify(error))
        } else if let http = response as? HTTPURLResponse {
            continuation.resume(returning: TransportResponse(head: URLSessionTransport.head(of: http), body: body))
        } else {
            continuation.resume(throwing: RunwayError.transport(description: "the response is not HTTP"))
        }
    }
}

extension SessionDelegate: URLSessionDataDelegate {
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(dataTask.taskIdentifier) else {
            completionHandler(.allow)
            return
        }
        completionHandler(transfer.begin(response) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask.taskIdentifier) else { return }
        if !transfer.receive(data) { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        transfer(task.taskIdentifier)?.uploadProgress?(totalBytesSent)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = removeTransfer(task.taskIdentifier) else { return }
        let refusedByPin = wasRefusedByPin(task.taskIdentifier)
        transfer.complete(response: task.response, error: error) { error in
            if refusedByPin { return .pinningFailed(host: task.originalRequest?.url?.host?.lowercased() ?? "") }
            return URLSessionTransport.classify(error)
        }
    }
}

extension URLSessionTransport {
    /// Whether `request` needs the delegate-driven path: a body from files, progress, or a sink.
    static func isTransfer(_ request: TransportRequest) -> Bool {
        request.responseSink != nil || request.uploadProgress != nil || (request.content.map { $0.data == nil } ?? false)
    }

    /// Sends an upload or download: the body from its file (a multipart form is first written to
    /// a temporary file, chunk by chunk, since a session task sends bytes or a file), the
    /// response body to the sink as it arrives.
    func sendTransfer(
        _ request: TransportRequest, _ urlRequest: URLRequest, handle: DataTaskHandle
    ) async throws -> TransportResponse {
        var spooled: URL?
        defer { if let spooled { try? FileManager.default.removeItem(at: spooled) } }
        var uploadFile: URL?
        if let content = request.content, content.data == nil {
            if let file = content.file {
                uploadFile = file
            } else {
                let file = FileManager.default.temporaryDirectory
                    .appendingPathComponent("runway-upload-\(UUID().uuidString.lowercased())")
                try content.write(to: file)
                spooled = file
                uploadFile = file
            }
        }
        var urlRequest = urlRequest
        urlRequest.httpBody = nil
        let bodyInMemory = request.content?.data
        let session = self.session
        let delegate = self.delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                let task: URLSessionDataTask
                if let uploadFile {
                    task = session.uploadTask(with: urlRequest, fromFile: uploadFile)
                } else if let bodyInMemory, !bodyInMemory.isEmpty {
                    task = session.uploadTask(with: urlRequest, from: bodyInMemory)
                } else {
                    task = session.dataTask(with: urlRequest)
                }
                delegate.register(TransferTask(request: request, continuation: continuation), for: task.taskIdentifier)
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }
}
