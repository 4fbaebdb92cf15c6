import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import RunwayServer
import Testing

@testable import Runway
@testable import RunwayNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One row of the README's error table: what a library raised, and what the app receives.
struct ErrorMapping: Sendable, CustomTestStringConvertible {
    let raised: @Sendable () -> any Error
    let expected: RunwayError
    let testDescription: String

    init(_ name: String, _ raised: @escaping @Sendable () -> any Error, _ expected: RunwayError) {
        self.raised = raised
        self.expected = expected
        testDescription = name
    }
}

/// Names that must never reach an app's message.
private let libraryNames = [
    "HTTPClientError", "NIOSSL", "BoringSSL", "NIOConnectionError", "IOError", "ChannelError", "HTTPParserError",
    "NIOTooManyBytes", "URLError", "NSURLErrorDomain", "AsyncHTTPClient", "NIOPosix", "NIOCore",
]

@Suite("Every transport error an app can meet is a RunwayError case")
struct ErrorClassificationTests {
    static let asyncHTTPClient: [ErrorMapping] = [
        .init("cancelled", { HTTPClientError.cancelled }, .cancelled),
        .init("requestStreamCancelled", { HTTPClientError.requestStreamCancelled }, .cancelled),
        .init("CancellationError", { CancellationError() }, .cancelled),
        .init("deadlineExceeded", { HTTPClientError.deadlineExceeded }, .timeout),
        .init("readTimeout", { HTTPClientError.readTimeout }, .timeout),
        .init("writeTimeout", { HTTPClientError.writeTimeout }, .timeout),
        .init("getConnectionFromPoolTimeout", { HTTPClientError.getConnectionFromPoolTimeout }, .timeout),
        .init("tlsHandshakeTimeout", { HTTPClientError.tlsHandshakeTimeout }, .timeout),
        .init("socksHandshakeTimeout", { HTTPClientError.socksHandshakeTimeout }, .timeout),
        .init("httpProxyHandshakeTimeout", { HTTPClientError.httpProxyHandshakeTimeout }, .timeout),
        .init("connectTimeout", { HTTPClientError.connectTimeout }, .noNetwork(reason: .unreachable)),
        .init("remoteConnectionClosed", { HTTPClientError.remoteConnectionClosed }, .connectionLost),
        .init("uncleanShutdown", { HTTPClientError.uncleanShutdown }, .connectionLost),
        .init("invalidURL", { HTTPClientError.invalidURL }, .invalidRequest(reason: "the URL cannot be sent")),
        .init("emptyHost", { HTTPClientError.emptyHost }, .invalidRequest(reason: "the URL cannot be sent")),
        .init("emptyScheme", { HTTPClientError.emptyScheme }, .invalidRequest(reason: "the URL cannot be sent")),
        .init("missingSocketPath", { HTTPClientError.missingSocketPath }, .invalidRequest(reason: "the URL cannot be sent")),
        .init(
            "unsupportedScheme", { HTTPClientError.unsupportedScheme("ftp") },
            .invalidRequest(reason: "only http and https URLs can be sent")),
        .init(
            "traceRequestWithBody", { HTTPClientError.traceRequestWithBody },
            .invalidRequest(reason: "a TRACE request cannot carry a body")),
        .init(
            "invalidHeaderFieldNames", { HTTPClientError.invalidHeaderFieldNames(["a b"]) },
            .invalidRequest(reason: "a header field name or value holds characters HTTP does not allow")),
        .init(
            "invalidHeaderFieldValues", { HTTPClientError.invalidHeaderFieldValues(["\n"]) },
            .invalidRequest(reason: "a header field name or value holds characters HTTP does not allow")),
        .init(
            "identityCodingIncorrectlyPresent", { HTTPClientError.identityCodingIncorrectlyPresent },
            .invalidRequest(reason: "the request's length and transfer-encoding fields disagree")),
        .init(
            "contentLengthMissing", { HTTPClientError.contentLengthMissing },
            .invalidRequest(reason: "the request's length and transfer-encoding fields disagree")),
        .init(
            "bodyLengthMismatch", { HTTPClientError.bodyLengthMismatch },
            .invalidRequest(reason: "the body's length differs from the length the request announced")),
        .init(
            "writeAfterRequestSent", { HTTPClientError.writeAfterRequestSent },
            .invalidRequest(reason: "the body's length differs from the length the request announced")),
        .init("alreadyShutdown", { HTTPClientError.alreadyShutdown }, .invalidRequest(reason: "the transport was shut down")),
        .init(
            "shutdownUnsupported", { HTTPClientError.shutdownUnsupported },
            .invalidRequest(reason: "the transport was shut down")),
        .init(
            "redirectLimitReached", { HTTPClientError.redirectLimitReached },
            .invalidRequest(reason: "the HTTPClient followed redirects; make it with redirectConfiguration: .disallow")),
        .init(
            "redirectCycleDetected", { HTTPClientError.redirectCycleDetected },
            .invalidRequest(reason: "the HTTPClient followed redirects; make it with redirectConfiguration: .disallow")),
        .init(
            "invalidProxyConfiguration", { HTTPClientError.invalidProxyConfiguration },
            .invalidRequest(reason: "the HTTP client's configuration is invalid")),
        .init(
            "invalidDNSOverridesConfiguration", { HTTPClientError.invalidDNSOverridesConfiguration },
            .invalidRequest(reason: "the HTTP client's configuration is invalid")),
        .init(
            "invalidHTTPVersionConfiguration", { HTTPClientError.invalidHTTPVersionConfiguration },
            .invalidRequest(reason: "the HTTP client's configuration is invalid")),
        .init(
            "invalidRedirectConfiguration", { HTTPClientError.invalidRedirectConfiguration },
            .invalidRequest(reason: "the HTTP client's configuration is invalid")),
        .init(
            "invalidLocalAddress", { HTTPClientError.invalidLocalAddress },
            .invalidRequest(reason: "the HTTP client's configuration is invalid")),
        .init("invalidProxyResponse", { HTTPClientError.invalidProxyResponse }, .noNetwork(reason: .unreachable)),
        .init(
            "proxyAuthenticationRequired", { HTTPClientError.proxyAuthenticationRequired },
            .unauthenticated(reason: "the HTTP proxy asked for credentials")),
        .init(
            "serverOfferedUnsupportedApplicationProtocol", { HTTPClientError.serverOfferedUnsupportedApplicationProtocol("spdy/3") },
            .tlsFailure(reason: "the server chose an application protocol this client does not speak")),
        .init(
            "internalStateFailure", { HTTPClientError.internalStateFailure() },
            .transport(description: "the HTTP client reached a state it cannot continue from")),
        .init("NIOSSL uncleanShutdown", { NIOSSLError.uncleanShutdown }, .connectionLost),
        .init(
            "NIOSSL unableToValidateCertificate", { NIOSSLError.unableToValidateCertificate },
            .tlsFailure(reason: "the server's certificate could not be validated")),
        .init(
            "NIOSSL failedToLoadCertificate", { NIOSSLError.failedToLoadCertificate },
            .tlsFailure(reason: "the client's certificate or key could not be loaded")),
        .init(
            "NIOSSL handshakeFailed", { NIOSSLError.handshakeFailed(.syscallError) },
            .tlsFailure(reason: "the TLS handshake failed")),
        .init(
            "NIOSSL failedToValidateHostname", { NIOSSLExtraError.failedToValidateHostname },
            .tlsFailure(reason: "the certificate does not name the host")),
        .init("NIOSSL readInInvalidTLSState", { NIOSSLError.readInInvalidTLSState }, .tlsFailure(reason: "the secure connection failed")),
        .init("HTTPParser invalidEOFState", { HTTPParserError.invalidEOFState }, .connectionLost),
        .init(
            "HTTPParser invalidStatus", { HTTPParserError.invalidStatus },
            .invalidResponse(reason: "the server's answer is not well-formed HTTP (invalid HTTP status code)")),
        .init(
            "NIOTooManyBytesError", { NIOTooManyBytesError(maxBytes: 32) },
            .invalidResponse(reason: "the body is larger than allowed (32 bytes)")),
        .init("ECONNREFUSED", { IOError(errnoCode: ECONNREFUSED, reason: "connect") }, .noNetwork(reason: .connectionRefused)),
        .init("EHOSTUNREACH", { IOError(errnoCode: EHOSTUNREACH, reason: "connect") }, .noNetwork(reason: .unreachable)),
        .init("ENETUNREACH", { IOError(errnoCode: ENETUNREACH, reason: "connect") }, .noNetwork(reason: .unreachable)),
        .init("ECONNRESET", { IOError(errnoCode: ECONNRESET, reason: "read") }, .connectionLost),
        .init("EPIPE", { IOError(errnoCode: EPIPE, reason: "write") }, .connectionLost),
        .init("ETIMEDOUT", { IOError(errnoCode: ETIMEDOUT, reason: "connect") }, .timeout),
        .init("EMFILE", { IOError(errnoCode: EMFILE, reason: "socket") }, .transport(description: "the connection failed (errno \(EMFILE))")),
        .init("ChannelError connectTimeout", { ChannelError.connectTimeout(.seconds(1)) }, .noNetwork(reason: .unreachable)),
        .init("ChannelError ioOnClosedChannel", { ChannelError.ioOnClosedChannel }, .connectionLost),
        .init("ChannelError eof", { ChannelError.eof }, .connectionLost),
        .init("ChannelError outputClosed", { ChannelError.outputClosed }, .connectionLost),
        .init("ChannelError alreadyClosed", { ChannelError.alreadyClosed }, .connectionLost),
    ]

    static let urlSession: [ErrorMapping] = {
        func url(_ code: URLError.Code) -> @Sendable () -> any Error {
            { URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "http://api.example.com/x") as Any]) }
        }
        return [
            .init("cancelled", url(.cancelled), .cancelled),
            .init("timedOut", url(.timedOut), .timeout),
            .init("cannotConnectToHost", url(.cannotConnectToHost), .noNetwork(reason: .connectionRefused)),
            .init("cannotFindHost", url(.cannotFindHost), .noNetwork(reason: .dnsFailure)),
            .init("dnsLookupFailed", url(.dnsLookupFailed), .noNetwork(reason: .dnsFailure)),
            .init("notConnectedToInternet", url(.notConnectedToInternet), .noNetwork(reason: .unreachable)),
            .init("internationalRoamingOff", url(.internationalRoamingOff), .noNetwork(reason: .unreachable)),
            .init("dataNotAllowed", url(.dataNotAllowed), .noNetwork(reason: .unreachable)),
            .init("callIsActive", url(.callIsActive), .noNetwork(reason: .unreachable)),
            .init("networkConnectionLost", url(.networkConnectionLost), .connectionLost),
            .init(
                "serverCertificateUntrusted", url(.serverCertificateUntrusted),
                .tlsFailure(reason: "the server's certificate is not trusted")),
            .init(
                "serverCertificateHasUnknownRoot", url(.serverCertificateHasUnknownRoot),
                .tlsFailure(reason: "the server's certificate is not trusted")),
            .init(
                "serverCertificateHasBadDate", url(.serverCertificateHasBadDate),
                .tlsFailure(reason: "the server's certificate is expired or not yet valid")),
            .init(
                "serverCertificateNotYetValid", url(.serverCertificateNotYetValid),
                .tlsFailure(reason: "the server's certificate is expired or not yet valid")),
            .init(
                "clientCertificateRejected", url(.clientCertificateRejected),
                .tlsFailure(reason: "the server wants a client certificate this app did not give")),
            .init(
                "clientCertificateRequired", url(.clientCertificateRequired),
                .tlsFailure(reason: "the server wants a client certificate this app did not give")),
            .init("secureConnectionFailed", url(.secureConnectionFailed), .tlsFailure(reason: "the secure connection failed")),
            .init(
                "appTransportSecurityRequiresSecureConnection", url(.appTransportSecurityRequiresSecureConnection),
                .insecureConnection(host: "api.example.com")),
            .init(
                "userAuthenticationRequired", url(.userAuthenticationRequired),
                .unauthenticated(reason: "the server asked for credentials that were not given")),
            .init(
                "userCancelledAuthentication", url(.userCancelledAuthentication),
                .unauthenticated(reason: "the server asked for credentials that were not given")),
            .init(
                "badServerResponse", url(.badServerResponse),
                .invalidResponse(reason: "the server's answer is not well-formed HTTP")),
            .init(
                "cannotParseResponse", url(.cannotParseResponse),
                .invalidResponse(reason: "the server's answer is not well-formed HTTP")),
            .init(
                "cannotDecodeContentData", url(.cannotDecodeContentData),
                .invalidResponse(reason: "the body cannot be decoded in its content encoding")),
            .init(
                "cannotDecodeRawData", url(.cannotDecodeRawData),
                .invalidResponse(reason: "the body cannot be decoded in its content encoding")),
            .init(
                "dataLengthExceedsMaximum", url(.dataLengthExceedsMaximum),
                .invalidResponse(reason: "the body is larger than allowed")),
            .init("zeroByteResource", url(.zeroByteResource), .noContent),
            .init("badURL", url(.badURL), .invalidRequest(reason: "the URL cannot be sent")),
            .init("unsupportedURL", url(.unsupportedURL), .invalidRequest(reason: "the URL cannot be sent")),
            .init(
                "requestBodyStreamExhausted", url(.requestBodyStreamExhausted),
                .invalidRequest(reason: "the body could not be read again for a retry")),
            .init("fileDoesNotExist", url(.fileDoesNotExist), .invalidRequest(reason: "the file to upload cannot be read")),
            .init("fileIsDirectory", url(.fileIsDirectory), .invalidRequest(reason: "the file to upload cannot be read")),
            .init(
                "noPermissionsToReadFile", url(.noPermissionsToReadFile),
                .invalidRequest(reason: "the file to upload cannot be read")),
            .init(
                "httpTooManyRedirects", url(.httpTooManyRedirects),
                .redirectRefused(location: "", reason: "URLSession followed redirects it should have handed back")),
            .init(
                "redirectToNonExistentLocation", url(.redirectToNonExistentLocation),
                .redirectRefused(location: "", reason: "URLSession followed redirects it should have handed back")),
            .init(
                "cannotWriteToFile", url(.cannotWriteToFile),
                .transport(description: "the download could not be written to disk")),
            .init(
                "cannotCreateFile", url(.cannotCreateFile),
                .transport(description: "the download could not be written to disk")),
            .init(
                "downloadDecodingFailedMidStream", url(.downloadDecodingFailedMidStream),
                .transport(description: "the download could not be written to disk")),
            .init(
                "backgroundSessionWasDisconnected", url(.backgroundSessionWasDisconnected),
                .transport(description: "the background session is not available")),
            .init(
                "resourceUnavailable", url(.resourceUnavailable),
                .transport(description: "the system refused the request (code \(URLError.Code.resourceUnavailable.rawValue))")),
            .init(
                "unknown", url(.unknown), .transport(description: "the connection failed (code \(URLError.Code.unknown.rawValue))")),
        ]
    }()

    #if canImport(FoundationNetworking)
    /// What swift-corelibs-foundation reports as code -1 with libcurl's text (read off libcurl 7.88).
    static let curlTexts: [ErrorMapping] = {
        func curl(_ text: String) -> @Sendable () -> any Error {
            { URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: text]) }
        }
        let untrusted = RunwayError.tlsFailure(reason: "the server's certificate is not trusted")
        return [
            .init("partial file", curl("transfer closed with 989 bytes remaining to read"), .connectionLost),
            .init("recv error", curl("Recv failure: Connection reset by peer"), .connectionLost),
            .init("got nothing", curl("Empty reply from server"), .connectionLost),
            .init("self-signed", curl("SSL certificate problem: self-signed certificate"), untrusted),
            .init("unknown issuer", curl("SSL certificate problem: unable to get local issuer certificate"), untrusted),
            .init("peer failed verification", curl("SSL peer certificate or SSH remote key was not OK"), untrusted),
            .init(
                "name mismatch", curl("SSL: no alternative certificate subject name matches target host name 'a.example'"),
                .tlsFailure(reason: "the certificate does not name the host")),
            .init(
                "handshake", curl("OpenSSL SSL_connect: Connection reset by peer in connection to a.example:443"),
                .tlsFailure(reason: "the TLS handshake failed")),
            .init(
                "content coding", curl("Unrecognized content encoding type. libcurl understands deflate, gzip content encodings."),
                .invalidResponse(reason: "the body is in a content coding that was not asked for and cannot be decoded")),
            .init("anything else", curl("Something curl says"), .transport(description: "the connection failed (code -1)")),
        ]
    }()

    @Test("libcurl's texts behind URLSession's code -1 on Linux", arguments: curlTexts)
    func curlTextMapping(_ mapping: ErrorMapping) {
        let classified = URLSessionTransport.classify(mapping.raised())
        #expect(classified == mapping.expected)
        Self.expectNoLibraryName(classified)
    }
    #endif

    @Test("AsyncHTTPClient and SwiftNIO errors", arguments: asyncHTTPClient)
    func asyncHTTPClientMapping(_ mapping: ErrorMapping) {
        let classified = AsyncHTTPClientTransport.classify(mapping.raised())
        #expect(classified == mapping.expected)
        Self.expectNoLibraryName(classified)
    }

    @Test("URLSession errors", arguments: urlSession)
    func urlSessionMapping(_ mapping: ErrorMapping) {
        let classified = URLSessionTransport.classify(mapping.raised())
        #expect(classified == mapping.expected)
        Self.expectNoLibraryName(classified)
    }

    @Test("a TLS handshake's reason is BoringSSL's reason in words")
    func handshakeReason() {
        let description = "sslError([Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED])"
        #expect(AsyncHTTPClientErrors.handshakeReason(description) == "the TLS handshake failed: certificate verify failed")
        #expect(AsyncHTTPClientErrors.handshakeReason("sslError([])") == "the TLS handshake failed")
    }

    /// The case, over a real connection: a load queued for the transport's one pooled
    /// connection past AsyncHTTPClient's wait is a timeout in words, not `HTTPClientError`'s name.
    /// (The wait is the subject, so it is short; the held request's deadline is not.)
    @Test("a load that waits too long for a pooled connection is a timeout")
    func poolWaitIsTimeout() async throws {
        let server = try await DemoServer.start()
        let transport = AsyncHTTPClientTransport(
            connections: .init(maximumConnectionsPerHost: 1, connectTimeout: .milliseconds(200)))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            func request(_ path: String) -> TransportRequest {
                TransportRequest(
                    head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path),
                    body: nil, timeout: .seconds(600), apiName: "PoolWait")
            }
            let held = Task { try await transport.send(request("/faults/hang")) }
            await server.probe.wait(for: .holdStarted)
            await #expect(throws: RunwayError.timeout) { try await transport.send(request("/echo/queued")) }
            held.cancel()
            _ = await held.result
        }
        #expect(AsyncHTTPClientTransport.Connections().connectTimeout >= .seconds(60), "above any API's usual timeout")
    }

    static func expectNoLibraryName(_ error: RunwayError) {
        for language in ["en", "zh-Hans"] {
            let message = error.localizedMessage(language: language)
            for name in libraryNames {
                #expect(!message.contains(name), "\(message)")
            }
        }
    }
}
