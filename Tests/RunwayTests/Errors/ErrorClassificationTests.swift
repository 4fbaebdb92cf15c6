import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

@testable import Runway
@testable import RunwayNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One row of a transport's translation: what its library raised, and the fact it names.
struct ErrorMapping: Sendable, CustomTestStringConvertible {
    let raised: @Sendable () -> any Error
    let expected: TransportFault
    let testDescription: String

    init(_ name: String, _ raised: @escaping @Sendable () -> any Error, _ expected: TransportFault) {
        self.raised = raised
        self.expected = expected
        testDescription = name
    }
}

/// Names that must never reach an app's message.
private let libraryNames = [
    "HTTPClientError", "NIOSSL", "BoringSSL", "NIOConnectionError", "IOError", "ChannelError", "HTTPParserError",
    "NIOTooManyBytes", "URLError", "NSURLErrorDomain", "AsyncHTTPClient", "NIOPosix", "NIOCore",
    "NIOHTTP2", "StreamClosed", "HPACK", "HTTP2StreamID", "streamID", "Runway.", "ErrorClassificationTests",
]

/// An error of no library's, with nothing to say for itself.
private struct Unnamed: Error {
    var detail = "internal state 7"
}

/// An app's own error, with words for a person.
private struct Described: LocalizedError {
    var errorDescription: String? { "the app's own transport gave up" }
}

@Suite("Every transport error an app can meet is a RunwayError case", .timeLimit(.minutes(10)))
struct ErrorClassificationTests {
    static let asyncHTTPClient: [ErrorMapping] = [
        .init("cancelled", { HTTPClientError.cancelled }, .cancelled),
        .init("requestStreamCancelled", { HTTPClientError.requestStreamCancelled }, .cancelled),
        .init("CancellationError", { CancellationError() }, .cancelled),
        .init("deadlineExceeded", { HTTPClientError.deadlineExceeded }, .timedOut),
        .init("readTimeout", { HTTPClientError.readTimeout }, .timedOut),
        .init("writeTimeout", { HTTPClientError.writeTimeout }, .timedOut),
        .init("getConnectionFromPoolTimeout", { HTTPClientError.getConnectionFromPoolTimeout }, .timedOut),
        .init("tlsHandshakeTimeout", { HTTPClientError.tlsHandshakeTimeout }, .timedOut),
        .init("socksHandshakeTimeout", { HTTPClientError.socksHandshakeTimeout }, .timedOut),
        .init("httpProxyHandshakeTimeout", { HTTPClientError.httpProxyHandshakeTimeout }, .timedOut),
        .init("connectTimeout", { HTTPClientError.connectTimeout }, .unreachable),
        .init("remoteConnectionClosed", { HTTPClientError.remoteConnectionClosed }, .connectionLost),
        .init("uncleanShutdown", { HTTPClientError.uncleanShutdown }, .connectionLost),
        .init("invalidURL", { HTTPClientError.invalidURL }, .unsendableURL),
        .init("emptyHost", { HTTPClientError.emptyHost }, .unsendableURL),
        .init("emptyScheme", { HTTPClientError.emptyScheme }, .unsendableURL),
        .init("missingSocketPath", { HTTPClientError.missingSocketPath }, .unsendableURL),
        .init(
            "unsupportedScheme", { HTTPClientError.unsupportedScheme("ftp") },
            .unsupportedScheme),
        .init(
            "traceRequestWithBody", { HTTPClientError.traceRequestWithBody },
            .bodyNotAllowed),
        .init(
            "invalidHeaderFieldNames", { HTTPClientError.invalidHeaderFieldNames(["a b"]) },
            .invalidHeaderField),
        .init(
            "invalidHeaderFieldValues", { HTTPClientError.invalidHeaderFieldValues(["\n"]) },
            .invalidHeaderField),
        .init(
            "identityCodingIncorrectlyPresent", { HTTPClientError.identityCodingIncorrectlyPresent },
            .framingConflict),
        .init(
            "contentLengthMissing", { HTTPClientError.contentLengthMissing },
            .framingConflict),
        .init(
            "bodyLengthMismatch", { HTTPClientError.bodyLengthMismatch },
            .bodyLengthMismatch),
        .init(
            "writeAfterRequestSent", { HTTPClientError.writeAfterRequestSent },
            .bodyLengthMismatch),
        .init("alreadyShutdown", { HTTPClientError.alreadyShutdown }, .shutDown),
        .init(
            "shutdownUnsupported", { HTTPClientError.shutdownUnsupported },
            .shutDown),
        .init(
            "redirectLimitReached", { HTTPClientError.redirectLimitReached },
            .followedRedirects),
        .init(
            "redirectCycleDetected", { HTTPClientError.redirectCycleDetected },
            .followedRedirects),
        .init(
            "invalidProxyConfiguration", { HTTPClientError.invalidProxyConfiguration },
            .misconfigured),
        .init(
            "invalidDNSOverridesConfiguration", { HTTPClientError.invalidDNSOverridesConfiguration },
            .misconfigured),
        .init(
            "invalidHTTPVersionConfiguration", { HTTPClientError.invalidHTTPVersionConfiguration },
            .misconfigured),
        .init(
            "invalidRedirectConfiguration", { HTTPClientError.invalidRedirectConfiguration },
            .misconfigured),
        .init(
            "invalidLocalAddress", { HTTPClientError.invalidLocalAddress },
            .misconfigured),
        .init("invalidProxyResponse", { HTTPClientError.invalidProxyResponse }, .unreachable),
        .init(
            "proxyAuthenticationRequired", { HTTPClientError.proxyAuthenticationRequired },
            .credentialsRequired(byProxy: true)),
        .init(
            "serverOfferedUnsupportedApplicationProtocol", { HTTPClientError.serverOfferedUnsupportedApplicationProtocol("spdy/3") },
            .protocolNotNegotiated),
        .init(
            "internalStateFailure", { HTTPClientError.internalStateFailure() },
            .internalFailure),
        .init("NIOSSL uncleanShutdown", { NIOSSLError.uncleanShutdown }, .connectionLost),
        .init(
            "NIOSSL unableToValidateCertificate", { NIOSSLError.unableToValidateCertificate },
            .certificateUnverifiable),
        .init(
            "NIOSSL failedToLoadCertificate", { NIOSSLError.failedToLoadCertificate },
            .clientCertificateUnloadable),
        .init(
            "NIOSSL handshakeFailed", { NIOSSLError.handshakeFailed(.syscallError) },
            .handshakeFailed(detail: nil)),
        .init(
            "NIOSSL failedToValidateHostname", { NIOSSLExtraError.failedToValidateHostname },
            .certificateNameMismatch(host: nil)),
        .init("NIOSSL readInInvalidTLSState", { NIOSSLError.readInInvalidTLSState }, .handshakeFailed(detail: nil)),
        .init("HTTPParser invalidEOFState", { HTTPParserError.invalidEOFState }, .connectionLost),
        .init(
            "HTTPParser invalidStatus", { HTTPParserError.invalidStatus },
            .malformedResponse(detail: "invalid HTTP status code")),
        .init(
            "NIOTooManyBytesError", { NIOTooManyBytesError(maxBytes: 32) },
            .bodyTooLarge(limit: 32)),
        .init("ECONNREFUSED", { IOError(errnoCode: ECONNREFUSED, reason: "connect") }, .connectionRefused),
        .init("EHOSTUNREACH", { IOError(errnoCode: EHOSTUNREACH, reason: "connect") }, .unreachable),
        .init("ENETUNREACH", { IOError(errnoCode: ENETUNREACH, reason: "connect") }, .unreachable),
        .init("ECONNRESET", { IOError(errnoCode: ECONNRESET, reason: "read") }, .connectionLost),
        .init("EPIPE", { IOError(errnoCode: EPIPE, reason: "write") }, .connectionLost),
        .init("ETIMEDOUT", { IOError(errnoCode: ETIMEDOUT, reason: "connect") }, .timedOut),
        .init("EMFILE", { IOError(errnoCode: EMFILE, reason: "socket") }, .other("errno \(EMFILE)")),
        .init("ChannelError connectTimeout", { ChannelError.connectTimeout(.seconds(1)) }, .unreachable),
        .init("ChannelError ioOnClosedChannel", { ChannelError.ioOnClosedChannel }, .connectionLost),
        .init("ChannelError eof", { ChannelError.eof }, .connectionLost),
        .init("ChannelError outputClosed", { ChannelError.outputClosed }, .connectionLost),
        .init("ChannelError alreadyClosed", { ChannelError.alreadyClosed }, .connectionLost),
        // A route or interface gone under a connection already made: part of the request may
        // have left, so it is a lost connection, not an unreachable host.
        .init(
            "ENETUNREACH on a write", { IOError(errnoCode: ENETUNREACH, reason: "writev(descriptor:iovecs:)") },
            .connectionLost),
        .init("EHOSTUNREACH on a read", { IOError(errnoCode: EHOSTUNREACH, reason: "read(descriptor:pointer:size:)") }, .connectionLost),
        .init(
            "ENETUNREACH connecting", { IOError(errnoCode: ENETUNREACH, reason: "connect(descriptor:addr:size:)") },
            .unreachable),
        // HTTP/2: a stream the server resets is the event a TCP reset is over HTTP/1.1.
        .init(
            "HTTP/2 StreamClosed (cancel)", { NIOHTTP2Errors.streamClosed(streamID: 3, errorCode: .cancel) },
            .connectionLost),
        .init(
            "HTTP/2 StreamClosed (refusedStream)", { NIOHTTP2Errors.streamClosed(streamID: 5, errorCode: .refusedStream) },
            .connectionLost),
        .init(
            "HTTP/2 StreamClosed (internalError)", { NIOHTTP2Errors.streamClosed(streamID: 7, errorCode: .internalError) },
            .connectionLost),
        .init("HTTP/2 IOOnClosedConnection", { NIOHTTP2Errors.ioOnClosedConnection() }, .connectionLost),
        .init("HTTP/2 NoSuchStream", { NIOHTTP2Errors.noSuchStream(streamID: 9) }, .connectionLost),
        .init(
            "HTTP/2 ContentLengthViolated", { NIOHTTP2Errors.contentLengthViolated() },
            .malformedResponse(detail: "the body's length differs from its Content-Length")),
        .init(
            "HTTP/2 FlowControlViolation", { NIOHTTP2Errors.flowControlViolation() },
            .malformedResponse(detail: "the HTTP/2 framing is broken")),
        .init(
            "HTTP/2 InvalidStatusValue", { NIOHTTP2Errors.invalidStatusValue("2000") },
            .malformedResponse(detail: "the HTTP/2 framing is broken")),
        // Anything no library names: never a dump of a type in a message for a person.
        .init("an error of nobody's", { Unnamed() }, .other("an unrecognised failure")),
        .init("an app's LocalizedError", { Described() }, .other("the app's own transport gave up")),
    ]

    static let urlSession: [ErrorMapping] = {
        func url(_ code: URLError.Code) -> @Sendable () -> any Error {
            { URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "http://api.example.com/x") as Any]) }
        }
        return [
            .init("cancelled", url(.cancelled), .cancelled),
            .init("timedOut", url(.timedOut), .timedOut),
            .init("cannotConnectToHost", url(.cannotConnectToHost), .connectionRefused),
            .init("cannotFindHost", url(.cannotFindHost), .hostNotFound),
            .init("dnsLookupFailed", url(.dnsLookupFailed), .hostNotFound),
            .init("notConnectedToInternet", url(.notConnectedToInternet), .unreachable),
            .init("internationalRoamingOff", url(.internationalRoamingOff), .unreachable),
            .init("dataNotAllowed", url(.dataNotAllowed), .unreachable),
            .init("callIsActive", url(.callIsActive), .unreachable),
            .init("networkConnectionLost", url(.networkConnectionLost), .connectionLost),
            .init(
                "serverCertificateUntrusted", url(.serverCertificateUntrusted),
                .certificateUntrusted),
            .init(
                "serverCertificateHasUnknownRoot", url(.serverCertificateHasUnknownRoot),
                .certificateUntrusted),
            .init(
                "serverCertificateHasBadDate", url(.serverCertificateHasBadDate),
                .certificateOutOfDate),
            .init(
                "serverCertificateNotYetValid", url(.serverCertificateNotYetValid),
                .certificateOutOfDate),
            .init(
                "clientCertificateRejected", url(.clientCertificateRejected),
                .clientCertificateRefused),
            .init(
                "clientCertificateRequired", url(.clientCertificateRequired),
                .clientCertificateRefused),
            .init("secureConnectionFailed", url(.secureConnectionFailed), .handshakeFailed(detail: nil)),
            .init(
                "appTransportSecurityRequiresSecureConnection", url(.appTransportSecurityRequiresSecureConnection),
                .insecureConnectionRefused(host: "api.example.com")),
            .init(
                "userAuthenticationRequired", url(.userAuthenticationRequired),
                .credentialsRequired(byProxy: false)),
            .init(
                "userCancelledAuthentication", url(.userCancelledAuthentication),
                .credentialsRequired(byProxy: false)),
            .init(
                "badServerResponse", url(.badServerResponse),
                .malformedResponse(detail: nil)),
            .init(
                "cannotParseResponse", url(.cannotParseResponse),
                .malformedResponse(detail: nil)),
            .init(
                "cannotDecodeContentData", url(.cannotDecodeContentData),
                .undecodableBody),
            .init(
                "cannotDecodeRawData", url(.cannotDecodeRawData),
                .undecodableBody),
            .init(
                "dataLengthExceedsMaximum", url(.dataLengthExceedsMaximum),
                .bodyTooLarge(limit: nil)),
            .init("zeroByteResource", url(.zeroByteResource), .emptyResponse),
            .init("badURL", url(.badURL), .unsendableURL),
            .init("unsupportedURL", url(.unsupportedURL), .unsendableURL),
            .init(
                "requestBodyStreamExhausted", url(.requestBodyStreamExhausted),
                .bodyNotReplayable),
            .init("fileDoesNotExist", url(.fileDoesNotExist), .uploadFileUnreadable),
            .init("fileIsDirectory", url(.fileIsDirectory), .uploadFileUnreadable),
            .init(
                "noPermissionsToReadFile", url(.noPermissionsToReadFile),
                .uploadFileUnreadable),
            .init(
                "httpTooManyRedirects", url(.httpTooManyRedirects),
                .followedRedirects),
            .init(
                "redirectToNonExistentLocation", url(.redirectToNonExistentLocation),
                .followedRedirects),
            .init(
                "cannotWriteToFile", url(.cannotWriteToFile),
                .downloadNotWritable),
            .init(
                "cannotCreateFile", url(.cannotCreateFile),
                .downloadNotWritable),
            .init(
                "downloadDecodingFailedMidStream", url(.downloadDecodingFailedMidStream),
                .downloadNotWritable),
            .init(
                "backgroundSessionWasDisconnected", url(.backgroundSessionWasDisconnected),
                .systemRefused(code: URLError.Code.backgroundSessionWasDisconnected.rawValue)),
            .init(
                "resourceUnavailable", url(.resourceUnavailable),
                .systemRefused(code: URLError.Code.resourceUnavailable.rawValue)),
            .init(
                "unknown", url(.unknown), .other("code \(URLError.Code.unknown.rawValue)")),
        ]
    }()

    #if canImport(FoundationNetworking)
    /// What swift-corelibs-foundation reports with libcurl's text, mostly as code -1 (read off
    /// libcurl 7.88).
    static let curlTexts: [ErrorMapping] = {
        func curl(_ text: String) -> @Sendable () -> any Error { coded(.unknown, text) }
        func coded(_ code: URLError.Code, _ text: String) -> @Sendable () -> any Error {
            { URLError(code, userInfo: [NSLocalizedDescriptionKey: text]) }
        }
        let untrusted = TransportFault.certificateUntrusted
        return [
            .init("partial file", curl("transfer closed with 989 bytes remaining to read"), .connectionLost),
            .init("recv error", curl("Recv failure: Connection reset by peer"), .connectionLost),
            .init("got nothing", curl("Empty reply from server"), .connectionLost),
            .init("self-signed", curl("SSL certificate problem: self-signed certificate"), untrusted),
            .init("unknown issuer", curl("SSL certificate problem: unable to get local issuer certificate"), untrusted),
            .init("peer failed verification", curl("SSL peer certificate or SSH remote key was not OK"), untrusted),
            .init(
                "name mismatch", curl("SSL: no alternative certificate subject name matches target host name 'a.example'"),
                .certificateNameMismatch(host: nil)),
            .init(
                "handshake", curl("OpenSSL SSL_connect: Connection reset by peer in connection to a.example:443"),
                .handshakeFailed(detail: nil)),
            .init(
                "content coding", curl("Unrecognized content encoding type. libcurl understands deflate, gzip content encodings."),
                .unofferedCoding(nil)),
            .init("anything else", curl("Something curl says"), .other("code -1")),
            // Found by the hostile-answer fuzzer: each under a code that did not say what happened.
            .init("not HTTP (-1002)", coded(.unsupportedURL, "Received HTTP/0.9 when not allowed"), .notHTTP),
            .init("reset (-1002)", coded(.unsupportedURL, "Recv failure: Connection reset by peer"), .connectionLost),
            .init("nothing (-1011)", coded(.badServerResponse, "Empty reply from server"), .connectionLost),
            .init(
                "a field Foundation cannot read", curl("Failed writing header"),
                .malformedResponse(detail: "a header field cannot be read")),
            .init("NUL in a field", curl("Nul byte in header"), .malformedResponse(detail: "a header field holds a NUL byte")),
            .init(
                "bad length", curl("Invalid Content-Length: value"),
                .malformedResponse(detail: "the Content-Length cannot be read")),
            .init(
                "bad chunk size", curl("Illegal or missing hexadecimal sequence in chunked-encoding"),
                .malformedResponse(detail: "the chunked framing is broken")),
            .init(
                "huge head", curl("Too large response headers: 319865 > 307200"),
                .malformedResponse(detail: "the header is larger than allowed")),
            .init("coding chain", curl("Reject response due to more than 5 content encodings"), .unofferedCoding(nil)),
            .init(
                "chunked stream", curl("Failed reading the chunked-encoded stream"),
                .malformedResponse(detail: "the chunked framing is broken")),
            .init(
                "body not taken", curl("Failed writing received data to disk/application"),
                .other("the body could not be taken")),
        ]
    }()

    @Test("libcurl's texts behind URLSession's code -1 on Linux", arguments: curlTexts)
    func curlTextMapping(_ mapping: ErrorMapping) {
        #expect(URLSessionErrors.fault(of: mapping.raised()) == mapping.expected)
        #expect(URLSessionTransport.classify(mapping.raised()) == RunwayError(mapping.expected))
    }
    #endif

    @Test("AsyncHTTPClient and SwiftNIO errors name their fact", arguments: asyncHTTPClient)
    func asyncHTTPClientMapping(_ mapping: ErrorMapping) {
        #expect(AsyncHTTPClientErrors.fault(of: mapping.raised()) == mapping.expected)
        #expect(AsyncHTTPClientTransport.classify(mapping.raised()) == RunwayError(mapping.expected))
    }

    @Test("what an app meets for each AsyncHTTPClient or SwiftNIO error names no library", arguments: asyncHTTPClient)
    func noLibraryNameOverAsyncHTTPClient(_ mapping: ErrorMapping) {
        Self.expectNoLibraryName(AsyncHTTPClientTransport.classify(mapping.raised()))
    }

    @Test("what an app meets for each URLSession error names no library", arguments: urlSession)
    func noLibraryNameOverURLSession(_ mapping: ErrorMapping) {
        Self.expectNoLibraryName(URLSessionTransport.classify(mapping.raised()))
    }

    @Test("URLSession errors name their fact", arguments: urlSession)
    func urlSessionMapping(_ mapping: ErrorMapping) {
        #expect(URLSessionErrors.fault(of: mapping.raised()) == mapping.expected)
        #expect(URLSessionTransport.classify(mapping.raised()) == RunwayError(mapping.expected))
    }

    /// The same thing going wrong, as each library says it: both transports name one fact, so
    /// the app meets one error whichever carried the load.
    @Test("the same failure from either library is the same fact")
    func sameFailureSameFact() {
        let pairs: [(URLError.Code, any Error, TransportFault)] = [
            (.cannotConnectToHost, IOError(errnoCode: ECONNREFUSED, reason: "connect"), .connectionRefused),
            (.networkConnectionLost, IOError(errnoCode: ECONNRESET, reason: "read"), .connectionLost),
            (.networkConnectionLost, HTTPClientError.remoteConnectionClosed, .connectionLost),
            (.timedOut, HTTPClientError.readTimeout, .timedOut),
            (.cancelled, HTTPClientError.cancelled, .cancelled),
            (.notConnectedToInternet, IOError(errnoCode: ENETUNREACH, reason: "connect"), .unreachable),
            (.badURL, HTTPClientError.invalidURL, .unsendableURL),
            (.httpTooManyRedirects, HTTPClientError.redirectLimitReached, .followedRedirects),
        ]
        for (code, nioError, fact) in pairs {
            let fromURLSession = URLSessionErrors.fault(of: URLError(code))
            let fromNIO = AsyncHTTPClientErrors.fault(of: nioError)
            #expect(fromURLSession == fact, "URLSession \(code.rawValue)")
            #expect(fromNIO == fact, "\(nioError)")
        }
    }

    /// Every fact of the one table, with a value where it carries one.
    static let everyFact: [TransportFault] = [
        .cancelled, .timedOut, .connectionRefused, .hostNotFound, .unreachable, .connectionLost,
        .certificateUntrusted, .certificateOutOfDate, .certificateNameMismatch(host: "a.example"),
        .certificateNameMismatch(host: nil), .certificateUnverifiable, .clientCertificateRefused,
        .clientCertificateUnloadable, .handshakeFailed(detail: "CERTIFICATE_VERIFY_FAILED"), .handshakeFailed(detail: nil),
        .protocolNotNegotiated, .pinMismatch(host: "a.example"), .pinScopeUnsupported(.anyCertificateInChain, host: "a.example"),
        .insecureConnectionRefused(host: "a.example"), .malformedResponse(detail: "invalid HTTP status code"),
        .malformedResponse(detail: nil), .notHTTP, .bodyTooLarge(limit: 32), .bodyTooLarge(limit: nil), .undecodableBody,
        .unofferedCoding("br"), .unofferedCoding(nil), .emptyResponse, .followedRedirects,
        .credentialsRequired(byProxy: true), .credentialsRequired(byProxy: false), .unsendableURL, .unsupportedScheme,
        .invalidHeaderField, .framingConflict, .bodyLengthMismatch, .bodyNotReplayable, .uploadFileUnreadable,
        .bodyNotAllowed, .misconfigured, .shutDown, .downloadNotWritable, .systemRefused(code: -2000),
        .internalFailure, .other("errno 24"),
    ]

    @Test("the table says every fact in words that name no library", arguments: everyFact)
    func tableWords(_ fact: TransportFault) {
        Self.expectNoLibraryName(RunwayError(fact))
    }

    @Test("the table's chosen cases")
    func tableCases() {
        #expect(RunwayError(.connectionRefused) == .noNetwork(reason: .connectionRefused))
        #expect(RunwayError(.hostNotFound) == .noNetwork(reason: .dnsFailure))
        #expect(RunwayError(.timedOut) == .timeout)
        #expect(RunwayError(.pinMismatch(host: "a.example")) == .pinningFailed(host: "a.example"))
        #expect(RunwayError(.insecureConnectionRefused(host: "a.example")) == .insecureConnection(host: "a.example"))
        #expect(RunwayError(.emptyResponse) == .noContent)
        #expect(
            RunwayError(.handshakeFailed(detail: "CERTIFICATE_VERIFY_FAILED"))
                == .tlsFailure(reason: "the TLS handshake failed: certificate verify failed"))
        #expect(RunwayError(.other("errno 24")) == .transport(description: "the connection failed (errno 24)"))
        // A RunwayError a transport threw passes as it is; anything unnamed is named by the caller.
        #expect(TransportFault.classify(RunwayError.noContent) { _ in .notHTTP } == .noContent)
        #expect(TransportFault.classify(TransportFault.shutDown) { _ in .notHTTP } == RunwayError(.shutDown))
        #expect(TransportFault.classify(CocoaError(.fileNoSuchFile)) { _ in .notHTTP } == RunwayError(.notHTTP))
    }

    @Test("BoringSSL's reason code is read out of its error's description")
    func handshakeReason() {
        let description = "sslError([Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED])"
        #expect(AsyncHTTPClientErrors.reasonCode(description) == "CERTIFICATE_VERIFY_FAILED")
        #expect(AsyncHTTPClientErrors.reasonCode("sslError([])") == nil)
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
            // The held request shares the short deadline: a busy machine can run its connect
            // past it, so it is sent again until the server holds it (the subject is the
            // queued load, not this one).
            var held: Task<TransportResponse, any Error>?
            for _ in 0..<20 where held == nil {
                let holds = server.probe.count(of: .holdStarted)
                let attempt = Task { try await transport.send(request("/faults/hang")) }
                if await Self.firstOf(holding: attempt, server.probe, count: holds + 1) {
                    held = attempt
                } else if case .failure(let error) = await attempt.result {
                    try #require(error as? RunwayError == .timeout, "only the short deadline may end it: \(error)")
                }
            }
            let holding = try #require(held, "the server held none of 20 tries")
            await #expect(throws: RunwayError.timeout) { try await transport.send(request("/echo/queued")) }
            holding.cancel()
            _ = await holding.result
        }
        #expect(AsyncHTTPClientTransport.Connections().connectTimeout >= .seconds(60), "above any API's usual timeout")
    }

    /// Whether the server held a request (its `count`th hold) before `attempt` ended.
    static func firstOf(holding attempt: Task<TransportResponse, any Error>, _ probe: ServerProbe, count: Int) async -> Bool {
        let (ends, end) = AsyncStream<Bool>.makeStream()
        let hold = Task {
            await probe.wait(for: .holdStarted, count: count)
            end.yield(true)
        }
        let failure = Task {
            _ = await attempt.result
            end.yield(false)
        }
        var first = ends.makeAsyncIterator()
        let held = await first.next() ?? false
        hold.cancel()
        failure.cancel()
        return held
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
