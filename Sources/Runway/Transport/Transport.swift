import Foundation
public import HTTPTypes

/// Moves the bytes of one HTTP exchange: the last link of the engine's exchange.
///
/// Runway ships ``URLSessionTransport`` (Apple platforms and Linux) and, in the `RunwayNIO`
/// product, an AsyncHTTPClient transport; ``StubTransport`` answers from canned responses in
/// tests. Everything that is a rule of the exchange rather than a way of moving bytes belongs
/// to the ``Engine``, so that no transport is weaker than another: the deadline over head and
/// body, cancellation, the size cap (the engine's ``ResponseSink``), redirects, cookies,
/// credentials, the pin decision (``PublicKeyPins/accepts(chain:)``), content decoding and the
/// head's description of the decoded body, and which ``RunwayError`` each failure is. A
/// transport sends the request, streams the answer as it came off the wire into the sink, stops
/// when told, and names what went wrong as a ``TransportFault`` — the engine's one table turns
/// it into the error an app meets.
public protocol Transport: Sendable {
    /// Sends `request` and returns the response.
    ///
    /// Stop the exchange on the wire — close its connection or stream, so that the server sees
    /// it end — when ``TransportRequest/cancellation`` is cancelled (see
    /// ``honoursCancellation``) or the calling task is.
    ///
    /// - throws: A ``TransportFault`` naming what went wrong (or a ``RunwayError``: the built-in
    ///   transports throw the table's error, so a caller without an engine meets it too);
    ///   anything else is reported by the engine as ``TransportFault/other(_:)``.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Whether ``send(_:)`` stops the exchange when ``TransportRequest/cancellation`` is
    /// cancelled. The engine ends every exchange through that handle — at its deadline, when
    /// the load is cancelled, or when the calling task is. When `false` (the default) the engine
    /// runs the exchange in a task of its own that the handle cancels, which costs a task per
    /// request: a transport that honours the handle saves that.
    var honoursCancellation: Bool { get }

    /// Whether ``send(_:)`` connects to ``TransportRequest/connectAddress`` when it is set. A
    /// transport that cannot choose the address of a connection (URLSession) says `false` (the
    /// default), and ``Engine/register(_:)`` refuses a service with an ``EndpointSelector``.
    var supportsConnectAddress: Bool { get }

    /// The pin scopes ``send(_:)`` checks when ``TransportRequest/pins`` is set: on every new
    /// TLS connection, the connection's certificates against the pins. ``Engine/register(_:)``
    /// refuses a service whose pins ask for a scope not named here, and a request whose pins
    /// the transport cannot check fails closed. Empty (the default) for a transport that checks
    /// none.
    var pinScopes: Set<PublicKeyPins.Scope> { get }

    /// Whether the bodies ``send(_:)`` hands on are already content-decoded — gzip and deflate
    /// undone — while their heads still name the codings. `false` (the default): the transport
    /// hands on bytes as they came off the wire and the engine undoes the codings itself, one
    /// way for every transport. URLSession says `true`, as it undoes them whatever it is asked.
    var decodesContent: Bool { get }
}

extension Transport {
    public var honoursCancellation: Bool { false }
    public var decodesContent: Bool { false }
    public var supportsConnectAddress: Bool { false }
    public var pinScopes: Set<PublicKeyPins.Scope> { [] }
}

/// What the engine hands a transport.
public struct TransportRequest: Sendable {
    /// The request head: method, scheme, authority, path with query, header fields.
    public var head: HTTPRequest
    /// The body: bytes, or files read chunk by chunk while it is sent; `nil` for none.
    public var content: TransportBody?
    /// The time left for the whole exchange, from sending to the body's last byte. The engine
    /// enforces it through ``cancellation``; a transport may also hand it to its library, as a
    /// backstop for a caller that sends without an engine.
    public var timeout: Duration
    /// The API's name, which stub transports match on.
    public var apiName: String
    /// Called with the number of body bytes sent so far, as they are sent (uploads).
    public var uploadProgress: (@Sendable (Int64) -> Void)?
    /// Where the response body goes: the transport hands it the head, then every chunk in order,
    /// and returns a response with an empty body. The engine always sets one — a download's file,
    /// or its own collector, which bounds the body by the API's ``API/maximumResponseSize`` —
    /// so that every transport streams a body the same way and no size rule lives in a
    /// transport. With none, the transport returns the whole body in memory.
    public var responseSink: (any ResponseSink)?
    /// The IP address to connect to instead of resolving the authority's host (an
    /// ``EndpointSelector``'s choice). Nothing else changes: the `Host` field, TLS SNI and the
    /// certificate check stay on the host name. Honoured only where
    /// ``Transport/supportsConnectAddress`` is `true`.
    public var connectAddress: String?
    /// Ends this exchange without cancelling the calling task. The engine sets a new one for
    /// every exchange and cancels it at the exchange's deadline, when the load is cancelled, or
    /// when the calling task is; a transport that says ``Transport/honoursCancellation`` stops
    /// the exchange when it fires. `nil` when the request was not made by an engine.
    public var cancellation: LoadCancellation?
    /// The pins of the request's host (a registered service's ``Service/Connection/pins``): a new
    /// connection for this request must satisfy them, or the request fails with
    /// ``RunwayError/pinningFailed(host:)``. A transport that cannot check their
    /// ``PublicKeyPins/scope`` (see ``Transport/pinScopes``) fails the request instead of
    /// sending it unchecked.
    public var pins: PublicKeyPins?
    /// Whether ``responseSink`` only keeps bytes in memory (the engine's collector), so that a
    /// transport may feed it from its network thread; `false` for a download's file, or a sink
    /// a caller without an engine set, which may block.
    package var sinkKeepsInMemory = false
    /// Whether the caller ends the exchange at ``timeout`` through ``cancellation`` itself (the
    /// engine watches every exchange's deadline), so that a transport need not arm a timer of
    /// its library's as a backstop.
    package var deadlineWatched = false

    /// Creates a transport request.
    public init(
        head: HTTPRequest, content: TransportBody?, timeout: Duration, apiName: String,
        uploadProgress: (@Sendable (Int64) -> Void)? = nil, responseSink: (any ResponseSink)? = nil
    ) {
        self.head = head
        self.content = content
        self.timeout = timeout
        self.apiName = apiName
        self.uploadProgress = uploadProgress
        self.responseSink = responseSink
    }

    /// Creates a transport request with a body held in memory.
    public init(head: HTTPRequest, body: Data?, timeout: Duration, apiName: String) {
        self.init(head: head, content: body.map(TransportBody.init), timeout: timeout, apiName: apiName)
    }

    /// Refuses a request whose pins ask for a scope not in `scopes` (the sending transport's
    /// ``Transport/pinScopes``): it is never sent unchecked.
    ///
    /// - throws: ``TransportFault/pinScopeUnsupported(_:host:)``, as the table's ``RunwayError``.
    package func refuseUncheckablePins(checking scopes: Set<PublicKeyPins.Scope>) throws(RunwayError) {
        if let pins, !scopes.contains(pins.scope) { throw RunwayError(.pinScopeUnsupported(pins.scope, host: pins.host)) }
    }

    /// The body's bytes when it is held in memory; `nil` for none or for a body that streams
    /// from files. Setting it replaces the body with the bytes given.
    public var body: Data? {
        get { content?.data }
        set { content = newValue.map(TransportBody.init) }
    }
}

/// Receives a response body as it arrives, so that a download never sits in memory whole.
///
/// A transport calls ``begin(_:)`` with every response head (a redirect's too), then ``write(_:)``
/// with each chunk of that response's body, in order, from one task or queue at a time.
///
/// A sink may block (a file on a slow disk): Runway's transports call it on a dispatch queue,
/// never on an event loop or a thread of Swift's cooperative pool — URLSession's on its
/// delegate queue, AsyncHTTPClient's and the stub's on a queue of the exchange's own.
public protocol ResponseSink: AnyObject, Sendable {
    /// A response head arrived; its body follows. Throw to end the exchange.
    func begin(_ head: HTTPResponse) throws
    /// The next bytes of the body. Throw to end the exchange (a full disk, say).
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// A whole response: head and body.
public struct TransportResponse: Sendable {
    /// The response head: as it came off the wire from a transport, with the codings the
    /// engine undid and their wire length dropped from an engine or a transport that gathered
    /// the body itself.
    public var head: HTTPResponse
    /// The complete body; empty when the request's ``TransportRequest/responseSink`` received
    /// it. Content-decoded when the transport gathered it itself (no sink was given).
    public var body: Data
    /// The HTTP version the exchange used (`"HTTP/2"`, `"HTTP/1.1"`), when the transport knows it.
    public var httpVersion: String?
    /// The phases of the exchange. A transport sets those only it can see — waiting for a
    /// connection, DNS, connect, TLS, sending, and which it skipped on a reused connection —
    /// and leaves the rest unreported; the engine adds the time to the first byte and the body,
    /// which it measures the same way for every transport.
    public var timings: PhaseTimings

    /// Creates a response.
    public init(head: HTTPResponse, body: Data, httpVersion: String? = nil, timings: PhaseTimings = PhaseTimings()) {
        self.head = head
        self.body = body
        self.httpVersion = httpVersion
        self.timings = timings
    }
}
