import Foundation
public import HTTPTypes

/// Sends one HTTP request and returns the whole response: the seam between the engine and the
/// HTTP stack.
///
/// Runway ships ``URLSessionTransport`` (Apple platforms and Linux) and, in the `RunwayNIO`
/// product, an AsyncHTTPClient transport; ``StubTransport`` answers from canned responses in
/// tests. A transport honours task cancellation by cancelling the request on the wire, and
/// reports failures as ``RunwayError`` (``RunwayError/noNetwork(reason:)``,
/// ``RunwayError/connectionLost``, ``RunwayError/timeout``, ``RunwayError/cancelled``).
public protocol Transport: Sendable {
    /// Sends `request` and returns the response with its complete body.
    ///
    /// - throws: ``RunwayError`` for every failure the transport can classify; anything else is
    ///   reported by the engine as ``RunwayError/transport(description:)``.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Whether ``send(_:)`` itself fails with ``RunwayError/timeout`` once
    /// ``TransportRequest/timeout`` has passed without a complete response. When `false` (the
    /// default) the engine races each request against a timer instead, which costs a task and a
    /// timer per request.
    var enforcesTimeout: Bool { get }
}

extension Transport {
    public var enforcesTimeout: Bool { false }
}

/// What the engine hands a transport.
public struct TransportRequest: Sendable {
    /// The request head: method, scheme, authority, path with query, header fields.
    public var head: HTTPRequest
    /// The body, or `nil`.
    public var body: Data?
    /// The API's timeout over the whole exchange, from sending to the body's last byte.
    public var timeout: Duration
    /// The API's name, which stub transports match on.
    public var apiName: String

    /// Creates a transport request.
    public init(head: HTTPRequest, body: Data?, timeout: Duration, apiName: String) {
        self.head = head
        self.body = body
        self.timeout = timeout
        self.apiName = apiName
    }
}

/// A whole response: head and body.
public struct TransportResponse: Sendable {
    /// The response head.
    public var head: HTTPResponse
    /// The complete body, content-decoded (gzip already undone).
    public var body: Data
    /// The HTTP version the exchange used (`"HTTP/2"`, `"HTTP/1.1"`), when the transport knows it.
    public var httpVersion: String?

    /// Creates a response.
    public init(head: HTTPResponse, body: Data, httpVersion: String? = nil) {
        self.head = head
        self.body = body
        self.httpVersion = httpVersion
    }
}
