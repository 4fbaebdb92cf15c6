import Foundation
import HTTPTypes
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The transport over `URLSession`: the one for Apple platforms, and it works on Linux too.
///
/// URLSession brings HTTP/2, connection reuse, gzip decoding and the system's proxy and trust
/// settings. Cancelling the calling task cancels the data task on the wire. The transport's
/// session never follows redirects (a 3xx comes back as a response and the ``Engine`` decides
/// about the next hop), never answers an HTTP authentication challenge (the 401 comes back as a
/// response, and the service's ``Authentication`` decides), has no `URLCache` (Runway's
/// ``ResponseCache`` is the only cache, so pull to refresh and retries always reach the server)
/// and no cookie jar, and bounds each exchange, head and body, by the request's timeout.
public final class URLSessionTransport: Transport {
    let session: URLSession
    let delegate: SessionDelegate
    #if canImport(FoundationNetworking)
    /// The session's delegate queue, asked whether it holds the session back (Linux).
    let callbacks: DispatchedDelegateQueue
    #endif

    /// Creates the transport with its own session made from `configuration` (default:
    /// ephemeral, so nothing of it is written to disk).
    ///
    /// Whatever `configuration` says, the session gets no `URLCache`, ignores locally cached
    /// data, keeps no cookies and stores no credentials (``sessionConfiguration(_:)``).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let configuration = Self.sessionConfiguration(configuration)
        #if canImport(FoundationNetworking)
        let callbacks = DispatchedDelegateQueue()
        let delegate = SessionDelegate(callbacks: callbacks)
        self.callbacks = callbacks
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: callbacks)
        #else
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        #endif
        // Multipart forms are spooled to files for this transport: remove what a crash left.
        UploadSpool.sweepOnce()
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// A copy of `configuration` as the transport makes its session from it: no `URLCache`,
    /// locally cached data ignored, no cookies kept or sent, no credentials stored.
    ///
    /// The transport's own settings, for a plain `URLSession` that should behave as the
    /// transport's does — a comparison that sets up its own session from this one does the same
    /// work per request (Runway's benchmarks compare with such a session).
    public static func sessionConfiguration(
        _ configuration: URLSessionConfiguration = .ephemeral
    ) -> URLSessionConfiguration {
        let configuration = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // No cookie jar and no credential store behind the engine's back: cookies are a
        // service's explicit ``CookieJar``, and credentials its ``Authentication`` — both
        // cleared by a logout, and both seen by the cache's credential rule.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        return configuration
    }

    /// Cancelling ``TransportRequest/cancellation`` cancels the data task.
    public var honoursCancellation: Bool { true }

    /// On Apple platforms, both: the system evaluates the server's chain first, then the
    /// session's delegate matches the keys of the validated chain against the pins. On Linux,
    /// none: URLSession there offers no hook into the handshake (it raises no server-trust
    /// challenge), so a service with pins is refused at registration — use
    /// `AsyncHTTPClientTransport` there.
    public var pinScopes: Set<PublicKeyPins.Scope> {
        #if canImport(Security)
        Set(PublicKeyPins.Scope.allCases)
        #else
        []
        #endif
    }

    /// Yes: URLSession undoes gzip and deflate (and on Linux, libcurl's other codings) whatever
    /// it is asked, and keeps the head's `Content-Encoding`.
    public var decodesContent: Bool { true }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try request.refuseUncheckablePins(checking: pinScopes)
        let urlRequest = try Self.urlRequest(for: request)
        #if canImport(FoundationNetworking)
        let handle = DataTaskHandle(callbacks: callbacks)
        #else
        let handle = DataTaskHandle()
        #endif
        // The engine ends the exchange — its deadline, the load's cancellation — through this.
        let cancellation = request.cancellation
        let registration = cancellation?.register { handle.cancel() }
        defer { if let registration { cancellation?.end(registration) } }
        return try await exchange(request, urlRequest, handle: handle)
    }

    /// The request as URLSession takes it, without its body: ``exchange(_:_:handle:)`` hands
    /// the body to the task it makes.
    static func urlRequest(for request: TransportRequest) throws(RunwayError) -> URLRequest {
        guard let url = request.head.url else {
            throw RunwayError(.unsendableURL)
        }
        // URLSession's own timeout measures idle time between bytes: a backstop behind the
        // engine's deadline over the whole exchange.
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: Double(request.timeout.components.seconds) + 1)
        // A new request's method is GET already; setting it compares it with six names.
        if request.head.method != .get { urlRequest.httpMethod = request.head.method.rawValue }
        if !request.head.headerFields.isEmpty {
            urlRequest.allHTTPHeaderFields = headerDictionary(request.head.headerFields)
        }
        return urlRequest
    }

    /// The fields as `URLRequest.allHTTPHeaderFields`: what `addValue(_:forHTTPHeaderField:)`
    /// line by line makes — a name repeated (in any case) is one entry, its values joined with
    /// a comma, under the name as first written — in one pass. (`addValue` capitalizes the name
    /// and searches every entry so far, lowercasing each, for every line.) `Cookie` pairs are
    /// one line already (``HTTPFields/forEachHeaderLine(_:)``), joined with `"; "`.
    static func headerDictionary(_ fields: HTTPFields) -> [String: String] {
        var entries: [String: String] = [:]
        entries.reserveCapacity(fields.count)
        /// The name each entry is under, by the name's lowercase form.
        var written: [String: String] = [:]
        fields.forEachHeaderLine { name, value in
            let key = name.lowercased()
            if let first = written[key] {
                entries[first, default: ""] += "," + value
            } else {
                written[key] = name
                entries[name] = value
            }
        }
        return entries
    }

    static func head(of response: HTTPURLResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String, let fieldName = HTTPField.Name(name) else {
                continue
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return HTTPResponse(status: .init(code: response.statusCode), headerFields: fields)
    }

    /// `error` as the error an app meets: the fact URLSession's error names, by the engine's table.
    static func classify(_ error: any Error) -> RunwayError {
        TransportFault.classify(error, naming: URLSessionErrors.fault(of:))
    }
}

/// Holds a data task so that a cancellation arriving before or after it starts cancels it, and
/// so that a redirect is never answered for a task once it is cancelled.
///
/// swift-corelibs-foundation traps ("Received callback for HTTP redirection, but we're not
/// waiting for it") when the answer to `willPerformHTTPRedirection` reaches a task that was
/// cancelled while the delegate was being asked — both go to the task's work queue, and the
/// cancellation had changed its state. So the task is marked cancelled, and a redirect
/// answered, under one lock, and a cancelled task's redirect is left unanswered: its
/// cancellation ends it. (Found by the hostile-answer fuzzer over URLSession on Linux.)
///
/// On Linux the cancellation itself runs outside the lock, through
/// ``DispatchedDelegateQueue/callSession(_:)``: there `URLSessionTask.cancel()` waits for the
/// session's work queue, which may be waiting for room on the delegate queue — so a delegate
/// callback that cancelled inline would wait for itself. A redirect answer queued before the
/// mark still reaches the work queue before the cancellation does.
final class DataTaskHandle: Sendable {
    private enum State {
        case waiting
        case running(URLSessionDataTask)
        case cancelled
    }

    private let state = Locked<State>(.waiting)
    #if canImport(FoundationNetworking)
    private let callbacks: DispatchedDelegateQueue

    init(callbacks: DispatchedDelegateQueue) {
        self.callbacks = callbacks
    }
    #endif

    func start(_ task: URLSessionDataTask) {
        let cancelledEarly = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .running(task)
            return false
        }
        if cancelledEarly { task.cancel() }
        task.resume()
    }

    /// Marks the task cancelled and cancels it; on Linux, never waiting for a held session.
    func cancel() {
        let running = state.withLock { state -> URLSessionDataTask? in
            defer { state = .cancelled }
            if case .running(let task) = state { return task }
            return nil
        }
        guard let running else { return }
        #if canImport(FoundationNetworking)
        callbacks.callSession { running.cancel() }
        #else
        running.cancel()
        #endif
    }

    /// Runs `answer` (which answers a redirect) unless the task was cancelled.
    func answerRedirect(_ answer: () -> Void) {
        state.withLock { state in
            if case .running = state { answer() }
        }
    }
}
