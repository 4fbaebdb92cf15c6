import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What URLSession reports, named as the ``TransportFault`` it is; which ``RunwayError`` an app
/// meets for it is the engine's one table (``RunwayError/init(_:)``).
///
/// Every `URLError` code a data, upload or download task can end with has its fact here.
enum URLSessionErrors {
    static func fault(of error: any Error) -> TransportFault {
        guard let urlError = error as? URLError else {
            // Not URLSession's: an app's own code raised it.
            return TransportFault.unrecognised(error)
        }
        #if canImport(FoundationNetworking)
        // On Linux, URLSession runs on libcurl and reports many faults with curl's text
        // ("transfer closed with 989 bytes remaining to read") under a code that does not say
        // what happened (-1, and -1002 or -1011 for some): the text decides where it is known.
        if let named = fault(curlText: urlError.localizedDescription) {
            return named
        }
        #endif
        return fault(code: urlError.code, host: urlError.failingURL?.host)
    }

    #if canImport(FoundationNetworking)
    /// libcurl's own text for the faults swift-corelibs-foundation reports as code -1 (read off
    /// libcurl 7.88's error buffer): a connection cut short, a certificate the system does not
    /// trust, a failed handshake, and a content coding the request did not offer.
    /// libcurl's words for an answer that is not well-formed HTTP, and what they mean.
    static let malformed: [(String, String)] = [
        ("Failed writing header", "a header field cannot be read"),
        ("Nul byte in header", "a header field holds a NUL byte"),
        ("Invalid Content-Length", "the Content-Length cannot be read"),
        ("Illegal or missing hexadecimal sequence in chunked-encoding", "the chunked framing is broken"),
        ("Malformed encoding found in chunked-encoding", "the chunked framing is broken"),
        ("Too long hexadecimal number in chunked-encoding", "the chunked framing is broken"),
        ("Failed reading the chunked-encoded stream", "the chunked framing is broken"),
        ("Unrecognized or bad HTTP Content or Transfer-Encoding", "the transfer coding cannot be read"),
        ("Too large response headers", "the header is larger than allowed"),
        ("Weird server reply", "the status line cannot be read"),
        ("Unsupported HTTP version", "the status line cannot be read"),
        ("Header without colon", "a header field cannot be read"),
    ]

    static func fault(curlText text: String) -> TransportFault? {
        // A body cut short after the head (CURLE_PARTIAL_FILE): what Apple's URLSession calls
        // networkConnectionLost and AsyncHTTPClient a closed connection. A pooled connection the
        // server closed meanwhile fails the same way (CURLE_RECV_ERROR, CURLE_SEND_ERROR,
        // CURLE_GOT_NOTHING).
        let connectionFaults = ["transfer closed with", "Recv failure", "Send failure", "Failed sending data", "Empty reply"]
        if connectionFaults.contains(where: text.hasPrefix) { return .connectionLost }
        // CURLE_PEER_FAILED_VERIFICATION: "SSL certificate problem: self-signed certificate", …
        if text.hasPrefix("SSL certificate problem") || text.hasPrefix("SSL peer certificate") {
            return .certificateUntrusted
        }
        if text.hasPrefix("SSL: no alternative certificate subject name") || text.hasPrefix("SSL: certificate subject name") {
            return .certificateNameMismatch(host: nil)
        }
        // CURLE_SSL_CONNECT_ERROR: "OpenSSL SSL_connect: …", "SSL connect error".
        if text.hasPrefix("OpenSSL SSL_connect") || text.hasPrefix("SSL connect error") {
            return .handshakeFailed(detail: nil)
        }
        // CURLE_BAD_CONTENT_ENCODING: a coding curl does not know, raised before the head
        // reaches the session's delegate, or a gzip or deflate body curl could not inflate.
        if text.hasPrefix("Unrecognized content encoding") { return .unofferedCoding(nil) }
        if text.hasPrefix("Error while processing content unencoding") { return .undecodableBody }
        // CURLE_BAD_CONTENT_ENCODING for a chain of codings longer than curl takes.
        if text.hasPrefix("Reject response due to more than") { return .unofferedCoding(nil) }
        // CURLE_WRITE_ERROR on the body: Foundation's own data callback stopped taking it.
        if text.hasPrefix("Failed writing received data") { return .other("the body could not be taken") }
        // CURLE_UNSUPPORTED_PROTOCOL: bytes that are not an HTTP response at all.
        if text.hasPrefix("Received HTTP/0.9") { return .notHTTP }
        // CURLE_WEIRD_SERVER_REPLY and friends, and Foundation's own parser refusing a field
        // line (its header callback then reports a write error to curl).
        for (prefix, detail) in malformed where text.hasPrefix(prefix) { return .malformedResponse(detail: detail) }
        return nil
    }
    #endif

    /// The fact for each code, Apple's and Linux's (swift-corelibs-foundation raises a subset).
    static func fault(code: URLError.Code, host: String?) -> TransportFault {
        switch code {
        case .cancelled: return .cancelled
        case .timedOut: return .timedOut
        case .cannotConnectToHost: return .connectionRefused
        case .cannotFindHost, .dnsLookupFailed: return .hostNotFound
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive: return .unreachable
        case .networkConnectionLost: return .connectionLost
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot: return .certificateUntrusted
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid: return .certificateOutOfDate
        case .clientCertificateRejected, .clientCertificateRequired: return .clientCertificateRefused
        case .secureConnectionFailed: return .handshakeFailed(detail: nil)
        case .appTransportSecurityRequiresSecureConnection: return .insecureConnectionRefused(host: host ?? "")
        case .userAuthenticationRequired, .userCancelledAuthentication: return .credentialsRequired(byProxy: false)
        case .badServerResponse, .cannotParseResponse: return .malformedResponse(detail: nil)
        case .cannotDecodeRawData, .cannotDecodeContentData: return .undecodableBody
        case .dataLengthExceedsMaximum: return .bodyTooLarge(limit: nil)
        case .zeroByteResource: return .emptyResponse
        case .badURL, .unsupportedURL: return .unsendableURL
        case .requestBodyStreamExhausted: return .bodyNotReplayable
        case .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile: return .uploadFileUnreadable
        case .httpTooManyRedirects, .redirectToNonExistentLocation: return .followedRedirects
        case .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile, .cannotRemoveFile,
            .cannotMoveFile, .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete:
            return .downloadNotWritable
        case .backgroundSessionRequiresSharedContainer, .backgroundSessionInUseByAnotherProcess,
            .backgroundSessionWasDisconnected, .resourceUnavailable:
            return .systemRefused(code: code.rawValue)
        default: return .other("code \(code.rawValue)")
        }
    }
}
