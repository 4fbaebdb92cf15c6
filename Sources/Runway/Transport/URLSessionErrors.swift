import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What URLSession reports, as the ``RunwayError`` an app meets.
///
/// Every `URLError` code a data, upload or download task can end with has its case here, and
/// every reason is written in plain words: no library's type name (nor `NSURLErrorDomain`)
/// reaches an app's message. The README's *Errors* section holds the same table.
enum URLSessionErrors {
    static func classify(_ error: any Error) -> RunwayError {
        if let error = error as? RunwayError { return error }
        guard let urlError = error as? URLError else {
            // Not URLSession's: an app's own code raised it.
            return .transport(description: String(describing: error))
        }
        #if canImport(FoundationNetworking)
        // On Linux, URLSession runs on libcurl and reports many faults as URLError -1 with
        // curl's text ("transfer closed with 989 bytes remaining to read").
        if urlError.code == .unknown, let classified = classify(curlText: urlError.localizedDescription) {
            return classified
        }
        #endif
        return classify(code: urlError.code, host: urlError.failingURL?.host)
    }

    #if canImport(FoundationNetworking)
    /// libcurl's own text for the faults swift-corelibs-foundation reports as code -1 (read off
    /// libcurl 7.88's error buffer): a connection cut short, a certificate the system does not
    /// trust, a failed handshake, and a content coding the request did not offer.
    static func classify(curlText text: String) -> RunwayError? {
        // A body cut short after the head (CURLE_PARTIAL_FILE): what Apple's URLSession calls
        // networkConnectionLost and AsyncHTTPClient a closed connection. A pooled connection the
        // server closed meanwhile fails the same way (CURLE_RECV_ERROR, CURLE_SEND_ERROR,
        // CURLE_GOT_NOTHING).
        let connectionFaults = ["transfer closed with", "Recv failure", "Send failure", "Failed sending data", "Empty reply"]
        if connectionFaults.contains(where: text.hasPrefix) { return .connectionLost }
        // CURLE_PEER_FAILED_VERIFICATION: "SSL certificate problem: self-signed certificate", …
        if text.hasPrefix("SSL certificate problem") || text.hasPrefix("SSL peer certificate") {
            return .tlsFailure(reason: "the server's certificate is not trusted")
        }
        if text.hasPrefix("SSL: no alternative certificate subject name") || text.hasPrefix("SSL: certificate subject name") {
            return .tlsFailure(reason: "the certificate does not name the host")
        }
        // CURLE_SSL_CONNECT_ERROR: "OpenSSL SSL_connect: …", "SSL connect error".
        if text.hasPrefix("OpenSSL SSL_connect") || text.hasPrefix("SSL connect error") {
            return .tlsFailure(reason: "the TLS handshake failed")
        }
        // CURLE_BAD_CONTENT_ENCODING, raised before the head reaches the session's delegate.
        if text.hasPrefix("Unrecognized content encoding") {
            return .invalidResponse(reason: "the body is in a content coding that was not asked for and cannot be decoded")
        }
        return nil
    }
    #endif

    /// The case for each code, Apple's and Linux's (swift-corelibs-foundation raises a subset).
    static func classify(code: URLError.Code, host: String?) -> RunwayError {
        switch code {
        case .cancelled: return .cancelled
        case .timedOut: return .timeout
        case .cannotConnectToHost: return .noNetwork(reason: .connectionRefused)
        case .cannotFindHost, .dnsLookupFailed: return .noNetwork(reason: .dnsFailure)
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            return .noNetwork(reason: .unreachable)
        case .networkConnectionLost: return .connectionLost
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return .tlsFailure(reason: "the server's certificate is not trusted")
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return .tlsFailure(reason: "the server's certificate is expired or not yet valid")
        case .clientCertificateRejected, .clientCertificateRequired:
            return .tlsFailure(reason: "the server wants a client certificate this app did not give")
        case .secureConnectionFailed: return .tlsFailure(reason: "the secure connection failed")
        case .appTransportSecurityRequiresSecureConnection: return .insecureConnection(host: host ?? "")
        case .userAuthenticationRequired, .userCancelledAuthentication:
            return .unauthenticated(reason: "the server asked for credentials that were not given")
        case .badServerResponse, .cannotParseResponse:
            return .invalidResponse(reason: "the server's answer is not well-formed HTTP")
        case .cannotDecodeRawData, .cannotDecodeContentData:
            return .invalidResponse(reason: "the body cannot be decoded in its content encoding")
        case .dataLengthExceedsMaximum: return .invalidResponse(reason: "the body is larger than allowed")
        case .zeroByteResource: return .noContent
        case .badURL, .unsupportedURL: return .invalidRequest(reason: "the URL cannot be sent")
        case .requestBodyStreamExhausted: return .invalidRequest(reason: "the body could not be read again for a retry")
        case .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile:
            return .invalidRequest(reason: "the file to upload cannot be read")
        case .httpTooManyRedirects, .redirectToNonExistentLocation:
            return .redirectRefused(location: "", reason: "URLSession followed redirects it should have handed back")
        case .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile, .cannotRemoveFile,
            .cannotMoveFile, .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete:
            return .transport(description: "the download could not be written to disk")
        case .backgroundSessionRequiresSharedContainer, .backgroundSessionInUseByAnotherProcess,
            .backgroundSessionWasDisconnected:
            return .transport(description: "the background session is not available")
        case .resourceUnavailable:
            return .transport(description: "the system refused the request (code \(code.rawValue))")
        default: return .transport(description: "the connection failed (code \(code.rawValue))")
        }
    }
}
