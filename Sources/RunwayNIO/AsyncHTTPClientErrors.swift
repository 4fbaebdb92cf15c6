import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Runway

/// What AsyncHTTPClient and SwiftNIO report, as the ``RunwayError`` an app meets.
///
/// Every error the two libraries can raise for a request has its case here, and every reason
/// is written in plain words: no library's type name reaches an app's message. The README's
/// *Errors* section holds the same table.
enum AsyncHTTPClientErrors {
    static func classify(_ error: any Error) -> RunwayError {
        switch error {
        case let error as RunwayError: return error
        case let failure as PinCheck.Failure: return .pinningFailed(host: failure.host)
        case let failure as HostNameCheck.Failure:
            return .tlsFailure(reason: "the certificate does not name \(failure.host)")
        case is CancellationError: return .cancelled
        case let error as HTTPClientError: return classify(client: error)
        case let error as NIOSSLError: return classify(tls: error)
        case let error as BoringSSLError: return .tlsFailure(reason: handshakeReason(String(describing: error)))
        case let error as NIOSSLExtraError:
            if error == .failedToValidateHostname { return .tlsFailure(reason: "the certificate does not name the host") }
            return .tlsFailure(reason: "the secure connection failed")
        case let error as HTTPParserError:
            // The connection ended mid-message: the response was cut short on the wire.
            if case .invalidEOFState = error { return .connectionLost }
            return .invalidResponse(reason: "the server's answer is not well-formed HTTP (\(error))")
        case let error as NIOTooManyBytesError:
            return .invalidResponse(reason: "the body is larger than allowed (\(error.maxBytes.map(String.init) ?? "the limit") bytes)")
        case let error as NIOConnectionError:
            return classify(connectionFailures: error.connectionErrors.map(\.error), dnsFailed: error.dnsAError != nil)
        case let error as IOError: return classify(errno: error.errnoCode)
        case let error as ChannelError: return classify(channel: error)
        default:
            let description = String(describing: error)
            if description.contains("connectionRefused") { return .noNetwork(reason: .connectionRefused) }
            // Not AsyncHTTPClient's or SwiftNIO's: an app's own client or handler raised it.
            return .transport(description: description)
        }
    }

    /// Every `HTTPClientError` of AsyncHTTPClient 1.37.
    static func classify(client error: HTTPClientError) -> RunwayError {
        switch error {
        case .cancelled, .requestStreamCancelled: return .cancelled
        // A request queued for a pooled connection past its wait is late like any other.
        case .deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout, .tlsHandshakeTimeout,
            .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timeout
        case .connectTimeout: return .noNetwork(reason: .unreachable)
        case .remoteConnectionClosed, .uncleanShutdown: return .connectionLost
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath:
            return .invalidRequest(reason: "the URL cannot be sent")
        case .traceRequestWithBody: return .invalidRequest(reason: "a TRACE request cannot carry a body")
        // (AsyncHTTPClient 1.37 never raises its three deprecated errors: it corrects the framing
        // fields it once refused and supports informational answers.)
        case .identityCodingIncorrectlyPresent, .contentLengthMissing:
            return .invalidRequest(reason: "the request's length and transfer-encoding fields disagree")
        case .bodyLengthMismatch, .writeAfterRequestSent:
            return .invalidRequest(reason: "the body's length differs from the length the request announced")
        case .alreadyShutdown, .shutdownUnsupported: return .invalidRequest(reason: "the transport was shut down")
        case .redirectLimitReached, .redirectCycleDetected:
            return .invalidRequest(
                reason: "the HTTPClient followed redirects; make it with redirectConfiguration: .disallow")
        case .invalidRedirectConfiguration, .invalidHTTPVersionConfiguration, .invalidDNSOverridesConfiguration,
            .invalidLocalAddress, .invalidProxyConfiguration:
            return .invalidRequest(reason: "the HTTP client's configuration is invalid")
        case .invalidProxyResponse: return .noNetwork(reason: .unreachable)
        case .proxyAuthenticationRequired: return .unauthenticated(reason: "the HTTP proxy asked for credentials")
        default:
            // The cases that carry a value, which a pattern cannot name: told by their fixed
            // short description.
            switch error.shortDescription {
            case "Unsupported scheme": return .invalidRequest(reason: "only http and https URLs can be sent")
            case "Invalid header field names", "Invalid header field values":
                return .invalidRequest(reason: "a header field name or value holds characters HTTP does not allow")
            case "Server offered unsupported application protocol":
                return .tlsFailure(reason: "the server chose an application protocol this client does not speak")
            case let other where other.hasPrefix("An internal state failure"):
                return .transport(description: "the HTTP client reached a state it cannot continue from")
            default:
                // A case added after 1.37.
                return .transport(description: "the HTTP client failed: \(error.shortDescription)")
            }
        }
    }

    /// Every `NIOSSLError` a client connection can raise.
    static func classify(tls error: NIOSSLError) -> RunwayError {
        switch error {
        case .handshakeFailed(let inner): return .tlsFailure(reason: handshakeReason(String(describing: inner)))
        case .uncleanShutdown: return .connectionLost
        case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel, .cannotFindPeerIP:
            return .tlsFailure(reason: "the server's certificate could not be validated")
        case .failedToLoadCertificate, .failedToLoadPrivateKey, .noSuchFilesystemObject:
            return .tlsFailure(reason: "the client's certificate or key could not be loaded")
        default: return .tlsFailure(reason: "the secure connection failed")
        }
    }

    /// BoringSSL's reason for a failed handshake ("CERTIFICATE_VERIFY_FAILED") in words
    /// ("certificate verify failed"), without the error's type names.
    static func handshakeReason(_ description: String) -> String {
        guard let marker = description.range(of: "OPENSSL_internal:") else { return "the TLS handshake failed" }
        let code = description[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        guard !code.isEmpty else { return "the TLS handshake failed" }
        return "the TLS handshake failed: " + code.lowercased().replacingOccurrences(of: "_", with: " ")
    }

    static func classify(channel error: ChannelError) -> RunwayError {
        switch error {
        case .connectTimeout: return .noNetwork(reason: .unreachable)
        // A pooled connection the server closed between requests.
        case .ioOnClosedChannel, .eof, .outputClosed, .alreadyClosed, .inputClosed: return .connectionLost
        default: return .transport(description: "the connection failed (\(error))")
        }
    }

    static func classify(connectionFailures: [any Error], dnsFailed: Bool) -> RunwayError {
        if connectionFailures.isEmpty { return .noNetwork(reason: .dnsFailure) }
        for failure in connectionFailures {
            if let failure = failure as? IOError { return classify(errno: failure.errnoCode) }
        }
        return .noNetwork(reason: dnsFailed ? .dnsFailure : .unreachable)
    }

    static func classify(errno code: CInt) -> RunwayError {
        switch code {
        case ECONNREFUSED: return .noNetwork(reason: .connectionRefused)
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return .noNetwork(reason: .unreachable)
        case ECONNRESET, EPIPE, ECONNABORTED: return .connectionLost
        case ETIMEDOUT: return .timeout
        default: return .transport(description: "the connection failed (errno \(code))")
        }
    }
}
