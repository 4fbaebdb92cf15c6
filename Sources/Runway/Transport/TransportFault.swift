import Foundation

/// What a transport saw go wrong, said as a fact of the exchange rather than in its library's
/// types: what a transport throws, and what the engine turns into the ``RunwayError`` an app
/// meets by one table for every transport (``RunwayError/init(_:)``).
///
/// A transport's only classification work is naming the fact — `URLError.Code.cannotConnectToHost`
/// and SwiftNIO's `ECONNREFUSED` are both ``connectionRefused``; which case an app then meets,
/// and in which words, is decided once. A transport may still throw a ``RunwayError`` directly;
/// anything else it throws reaches the app as the table's ``TransportFault/other(_:)``.
public enum TransportFault: Error, Sendable, Hashable {
    // MARK: The exchange was ended

    /// The exchange was cancelled (the caller, the engine's deadline or the load's handle).
    case cancelled
    /// The transport's own timer ran out (a backstop behind the engine's deadline).
    case timedOut

    // MARK: The server could not be reached

    /// The host answered, but nothing listens on the port.
    case connectionRefused
    /// The host name could not be resolved.
    case hostNotFound
    /// No route to the host, the device is offline, or connecting took too long.
    case unreachable
    /// The connection was closed or reset before the answer was complete.
    case connectionLost

    // MARK: TLS

    /// The server's certificate does not chain to a trusted root.
    case certificateUntrusted
    /// The server's certificate is expired or not yet valid.
    case certificateOutOfDate
    /// The server's certificate does not name the host (`nil` when the library does not say
    /// which host it checked).
    case certificateNameMismatch(host: String?)
    /// The server's certificate could not be checked at all (none sent, or not parseable).
    case certificateUnverifiable
    /// The server wants a client certificate, or refused the one given.
    case clientCertificateRefused
    /// The client's own certificate or key could not be loaded.
    case clientCertificateUnloadable
    /// The TLS handshake failed; `detail` is the TLS library's reason code, when it gave one
    /// (`"CERTIFICATE_VERIFY_FAILED"`).
    case handshakeFailed(detail: String?)
    /// The server chose an application protocol (ALPN) this client does not speak.
    case protocolNotNegotiated
    /// The connection's certificates satisfied none of `host`'s pins.
    case pinMismatch(host: String)
    /// The request's pins ask for a scope this transport cannot check; nothing was sent.
    case pinScopeUnsupported(PublicKeyPins.Scope, host: String)
    /// The platform refused plain HTTP to `host` (App Transport Security).
    case insecureConnectionRefused(host: String)

    // MARK: The answer

    /// The answer is not well-formed HTTP; `detail` names the parser's complaint, when known.
    case malformedResponse(detail: String?)
    /// The answer is not an HTTP response at all.
    case notHTTP
    /// The body is larger than allowed (`limit` bytes, when known).
    case bodyTooLarge(limit: Int?)
    /// The body cannot be decoded in the content coding its head names.
    case undecodableBody
    /// The body is in a content coding the request did not offer.
    case unofferedCoding(String?)
    /// The server sent nothing where a body was due.
    case emptyResponse
    /// The library followed redirects itself, so the engine could not check each hop.
    case followedRedirects
    /// A proxy (or the library's own credential handling) asked for credentials not given.
    case credentialsRequired(byProxy: Bool)

    // MARK: The request

    /// The URL cannot be sent (no host, no scheme, characters a URL cannot hold).
    case unsendableURL
    /// Only `http` and `https` URLs can be sent.
    case unsupportedScheme
    /// A header field name or value holds characters HTTP does not allow.
    case invalidHeaderField
    /// The request's `Content-Length` and `Transfer-Encoding` disagree.
    case framingConflict
    /// The body's length differs from the length the request announced.
    case bodyLengthMismatch
    /// The body could not be read again for a second attempt.
    case bodyNotReplayable
    /// The file to upload cannot be read.
    case uploadFileUnreadable
    /// A request of this method cannot carry a body (`TRACE`).
    case bodyNotAllowed

    // MARK: The transport itself

    /// The transport's configuration is invalid (its proxy, HTTP versions, DNS overrides, …).
    case misconfigured
    /// The transport was shut down and cannot send.
    case shutDown
    /// A download could not be written to disk.
    case downloadNotWritable
    /// The system refused the request, or a background session is not available.
    case systemRefused(code: Int)
    /// The library reached a state it cannot continue from.
    case internalFailure
    /// A failure none of the other facts describes, in words that name no library type, or its
    /// numeric code.
    case other(String)

    /// A failure no transport names: in the error's own localized words when it has them (an
    /// app's `LocalizedError`), otherwise plainly unrecognised — never a dump of a library's
    /// type, which is no message to show a person.
    package static func unrecognised(_ error: any Error) -> TransportFault {
        if let described = (error as? any LocalizedError)?.errorDescription, !described.isEmpty {
            return .other(described)
        }
        return .other("an unrecognised failure")
    }
}
