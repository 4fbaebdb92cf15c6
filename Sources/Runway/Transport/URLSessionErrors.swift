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
        // On Linux, URLSession runs on libcurl and reports a body cut short after the head as
        // URLError -1 with curl's CURLE_PARTIAL_FILE text ("transfer closed with 989 bytes
        // remaining to read", "transfer closed with outstanding read data remaining"): the fault
        // Apple's URLSession calls networkConnectionLost and AsyncHTTPClient a closed connection.
        // A pooled connection the server closed meanwhile fails the same way, with curl's
        // CURLE_RECV_ERROR / CURLE_SEND_ERROR / CURLE_GOT_NOTHING texts.
        let connectionFaults = ["transfer closed with", "Recv failure", "Send failure", "Failed sending data", "Empty reply"]
        if urlError.code == .unknown, connectionFaults.contains(where: urlError.localizedDescription.hasPrefix) {
            return .connectionLost
        }
        #endif
        return classify(code: urlError.code, host: urlError.failingURL?.host)
    }

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
