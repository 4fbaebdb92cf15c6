extension RunwayError {
    /// The error an app meets when a transport saw `fault`: the one table from what went wrong on
    /// the wire to ``RunwayError``, for every transport, in words that name no library. The
    /// article *A load's way through* (its *Errors* section) holds the same table.
    public init(_ fault: TransportFault) {
        switch fault {
        case .cancelled: self = .cancelled
        case .timedOut: self = .timeout
        case .connectionRefused: self = .noNetwork(reason: .connectionRefused)
        case .hostNotFound: self = .noNetwork(reason: .dnsFailure)
        case .unreachable: self = .noNetwork(reason: .unreachable)
        case .connectionLost: self = .connectionLost
        case .certificateUntrusted: self = .tlsFailure(reason: "the server's certificate is not trusted")
        case .certificateOutOfDate: self = .tlsFailure(reason: "the server's certificate is expired or not yet valid")
        case .certificateNameMismatch(let host?): self = .tlsFailure(reason: "the certificate does not name \(host)")
        case .certificateNameMismatch(nil): self = .tlsFailure(reason: "the certificate does not name the host")
        case .certificateUnverifiable: self = .tlsFailure(reason: "the server's certificate could not be validated")
        case .clientCertificateRefused:
            self = .tlsFailure(reason: "the server wants a client certificate this app did not give")
        case .clientCertificateUnloadable: self = .tlsFailure(reason: "the client's certificate or key could not be loaded")
        case .handshakeFailed(let detail?):
            self = .tlsFailure(reason: "the TLS handshake failed: " + detail.lowercased().replacingOccurrences(of: "_", with: " "))
        case .handshakeFailed(nil): self = .tlsFailure(reason: "the TLS handshake failed")
        case .protocolNotNegotiated:
            self = .tlsFailure(reason: "the server chose an application protocol this client does not speak")
        case .pinMismatch(let host): self = .pinningFailed(host: host)
        case .pinScopeUnsupported(let scope, let host):
            self = .tlsFailure(reason: "this transport cannot check pins on \(scope) (\(host))")
        case .insecureConnectionRefused(let host): self = .insecureConnection(host: host)
        case .malformedResponse(let detail?):
            self = .invalidResponse(reason: "the server's answer is not well-formed HTTP (\(detail))")
        case .malformedResponse(nil): self = .invalidResponse(reason: "the server's answer is not well-formed HTTP")
        case .notHTTP: self = .invalidResponse(reason: "the response is not HTTP")
        case .bodyTooLarge(let limit?): self = .invalidResponse(reason: "the body is larger than allowed (\(limit) bytes)")
        case .bodyTooLarge(nil): self = .invalidResponse(reason: "the body is larger than allowed")
        case .undecodableBody: self = .invalidResponse(reason: "the body cannot be decoded in its content encoding")
        case .unofferedCoding(let coding?):
            self = .invalidResponse(
                reason: "the body is in the content coding \(coding), which was not asked for and cannot be decoded")
        case .unofferedCoding(nil):
            self = .invalidResponse(reason: "the body is in a content coding that was not asked for and cannot be decoded")
        case .emptyResponse: self = .noContent
        case .followedRedirects:
            self = .invalidRequest(
                reason: "the transport's client followed redirects by itself; make it hand back each 3xx "
                    + "(redirectConfiguration: .disallow)")
        case .credentialsRequired(byProxy: true): self = .unauthenticated(reason: "the HTTP proxy asked for credentials")
        case .credentialsRequired(byProxy: false):
            self = .unauthenticated(reason: "the server asked for credentials that were not given")
        case .unsendableURL: self = .invalidRequest(reason: "the URL cannot be sent")
        case .unsupportedScheme: self = .invalidRequest(reason: "only http and https URLs can be sent")
        case .invalidHeaderField:
            self = .invalidRequest(reason: "a header field name or value holds characters HTTP does not allow")
        case .framingConflict: self = .invalidRequest(reason: "the request's length and transfer-encoding fields disagree")
        case .bodyLengthMismatch:
            self = .invalidRequest(reason: "the body's length differs from the length the request announced")
        case .bodyNotReplayable: self = .invalidRequest(reason: "the body could not be read again for a retry")
        case .uploadFileUnreadable: self = .invalidRequest(reason: "the file to upload cannot be read")
        case .bodyNotAllowed: self = .invalidRequest(reason: "a TRACE request cannot carry a body")
        case .misconfigured: self = .invalidRequest(reason: "the transport's configuration is invalid")
        case .shutDown: self = .invalidRequest(reason: "the transport was shut down")
        case .downloadNotWritable: self = .transport(description: "the download could not be written to disk")
        case .systemRefused(let code): self = .transport(description: "the system refused the request (code \(code))")
        case .internalFailure: self = .transport(description: "the transport reached a state it cannot continue from")
        case .other(let description): self = .transport(description: "the connection failed (\(description))")
        }
    }
}

extension TransportFault {
    /// `error`, which a transport or its library raised, as the error an app meets: a
    /// ``RunwayError`` as it is, a ``TransportFault`` by the table (``RunwayError/init(_:)``), and
    /// anything else by the fact `naming` finds for it.
    package static func classify(_ error: any Error, naming: (any Error) -> TransportFault) -> RunwayError {
        switch error {
        case let error as RunwayError: return error
        case let fault as TransportFault: return RunwayError(fault)
        default: return RunwayError(naming(error))
        }
    }
}
