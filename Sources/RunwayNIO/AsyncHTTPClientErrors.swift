import AsyncHTTPClient
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Runway

/// What AsyncHTTPClient and SwiftNIO report, named as the `TransportFault` it is; which
/// `RunwayError` an app meets for it is the engine's one table (`RunwayError.init(_:)`).
///
/// Every error the two libraries can raise for a request has its fact here.
enum AsyncHTTPClientErrors {
    static func fault(of error: any Error) -> TransportFault {
        switch error {
        case let failure as PinCheck.Failure: return .pinMismatch(host: failure.host)
        case let failure as HostNameCheck.Failure: return .certificateNameMismatch(host: failure.host)
        case is CancellationError: return .cancelled
        case let error as HTTPClientError: return fault(client: error)
        case let error as NIOSSLError: return fault(tls: error)
        case let error as BoringSSLError: return .handshakeFailed(detail: reasonCode(String(describing: error)))
        case let error as NIOSSLExtraError:
            if error == .failedToValidateHostname { return .certificateNameMismatch(host: nil) }
            return .handshakeFailed(detail: nil)
        case let error as HTTPParserError:
            // The connection ended mid-message: the response was cut short on the wire.
            if case .invalidEOFState = error { return .connectionLost }
            return .malformedResponse(detail: "\(error)")
        case let error as NIOTooManyBytesError: return .bodyTooLarge(limit: error.maxBytes)
        case let error as NIOConnectionError:
            return fault(connectionFailures: error.connectionErrors.map(\.error), dnsFailed: error.dnsAError != nil)
        case let error as IOError: return fault(io: error)
        case let error as ChannelError: return fault(channel: error)
        case let error as NIOHTTP2Errors.StreamError: return fault(of: error.baseError)
        case is NIOHTTP2Errors.StreamClosed, is NIOHTTP2Errors.IOOnClosedConnection, is NIOHTTP2Errors.NoSuchStream:
            // The server reset the stream (RST_STREAM, whatever its code) or closed the
            // connection under it: the same event as a TCP reset over HTTP/1.1.
            return .connectionLost
        case is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue:
            return .malformedResponse(detail: "the body's length differs from its Content-Length")
        case is any NIOHTTP2Error: return .malformedResponse(detail: "the HTTP/2 framing is broken")
        case is any NIOHPACKError: return .malformedResponse(detail: "the HTTP/2 header block cannot be decoded")
        default:
            if String(describing: error).contains("connectionRefused") { return .connectionRefused }
            // Not AsyncHTTPClient's or SwiftNIO's: an app's own client or handler raised it.
            return TransportFault.unrecognised(error)
        }
    }

    /// Every `HTTPClientError` of AsyncHTTPClient 1.37.
    static func fault(client error: HTTPClientError) -> TransportFault {
        switch error {
        case .cancelled, .requestStreamCancelled: return .cancelled
        // A request queued for a pooled connection past its wait is late like any other.
        case .deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout, .tlsHandshakeTimeout,
            .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timedOut
        case .connectTimeout: return .unreachable
        case .remoteConnectionClosed, .uncleanShutdown: return .connectionLost
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: return .unsendableURL
        case .traceRequestWithBody: return .bodyNotAllowed
        // (AsyncHTTPClient 1.37 never raises its three deprecated errors: it corrects the framing
        // fields it once refused and supports informational answers.)
        case .identityCodingIncorrectlyPresent, .contentLengthMissing: return .framingConflict
        case .bodyLengthMismatch, .writeAfterRequestSent: return .bodyLengthMismatch
        case .alreadyShutdown, .shutdownUnsupported: return .shutDown
        case .redirectLimitReached, .redirectCycleDetected: return .followedRedirects
        case .invalidRedirectConfiguration, .invalidHTTPVersionConfiguration, .invalidDNSOverridesConfiguration,
            .invalidLocalAddress, .invalidProxyConfiguration:
            return .misconfigured
        case .invalidProxyResponse: return .unreachable
        case .proxyAuthenticationRequired: return .credentialsRequired(byProxy: true)
        default:
            // The cases that carry a value, which a pattern cannot name: told by their fixed
            // short description.
            switch error.shortDescription {
            case "Unsupported scheme": return .unsupportedScheme
            case "Invalid header field names", "Invalid header field values": return .invalidHeaderField
            case "Server offered unsupported application protocol": return .protocolNotNegotiated
            case let other where other.hasPrefix("An internal state failure"): return .internalFailure
            default:
                // A case added after 1.37.
                return .other(error.shortDescription)
            }
        }
    }

    /// Every `NIOSSLError` a client connection can raise.
    static func fault(tls error: NIOSSLError) -> TransportFault {
        switch error {
        case .handshakeFailed(let inner): return .handshakeFailed(detail: reasonCode(String(describing: inner)))
        case .uncleanShutdown: return .connectionLost
        case .unableToValidateCertificate, .noCertificateToValidate, .cannotMatchULabel, .cannotFindPeerIP:
            return .certificateUnverifiable
        case .failedToLoadCertificate, .failedToLoadPrivateKey, .noSuchFilesystemObject:
            return .clientCertificateUnloadable
        default: return .handshakeFailed(detail: nil)
        }
    }

    /// BoringSSL's reason code for a failed handshake (`"CERTIFICATE_VERIFY_FAILED"`) out of its
    /// error's description, without the error's type names; `nil` when it names none.
    static func reasonCode(_ description: String) -> String? {
        guard let marker = description.range(of: "OPENSSL_internal:") else { return nil }
        let code = description[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return code.isEmpty ? nil : String(code)
    }

    static func fault(channel error: ChannelError) -> TransportFault {
        switch error {
        case .connectTimeout: return .unreachable
        // A pooled connection the server closed between requests.
        case .ioOnClosedChannel, .eof, .outputClosed, .alreadyClosed, .inputClosed: return .connectionLost
        default: return .other("\(error)")
        }
    }

    static func fault(connectionFailures: [any Error], dnsFailed: Bool) -> TransportFault {
        if connectionFailures.isEmpty { return .hostNotFound }
        for failure in connectionFailures {
            // Every attempt here is a connect: nothing was sent.
            if let failure = failure as? IOError { return fault(errno: failure.errnoCode) }
        }
        return dnsFailed ? .hostNotFound : .unreachable
    }

    /// A system call's failure: connecting (nothing was sent), or on a connection already made.
    /// A route or interface that goes away under a connection is a lost connection, not an
    /// unreachable host: part of the request may have left, so it is not re-sent elsewhere.
    static func fault(io error: IOError) -> TransportFault {
        let fact = fault(errno: error.errnoCode)
        // SwiftNIO's description starts with the call that failed: `connect(descriptor:addr:size:)`.
        guard fact == .unreachable, !error.description.hasPrefix("connect") else { return fact }
        return .connectionLost
    }

    static func fault(errno code: CInt) -> TransportFault {
        switch code {
        case ECONNREFUSED: return .connectionRefused
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return .unreachable
        case ECONNRESET, EPIPE, ECONNABORTED: return .connectionLost
        case ETIMEDOUT: return .timedOut
        default: return .other("errno \(code)")
        }
    }
}
