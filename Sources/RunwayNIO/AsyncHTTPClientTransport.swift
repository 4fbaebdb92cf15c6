public import AsyncHTTPClient
import Foundation
import HTTPTypes
public import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
public import Runway

/// The transport over AsyncHTTPClient: for Linux and servers, and for apps that want SwiftNIO's
/// connection pool.
///
/// It speaks HTTP/1.1 and HTTP/2 (negotiated by ALPN over TLS), keeps connections pooled per
/// host, and undoes gzip and deflate content encoding. Cancelling the calling task cancels the
/// request, which closes its connection. It lives in the `RunwayNIO` product so that an app
/// using only `Runway` never links SwiftNIO.
///
/// For example:
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let engine = Engine(transport: transport)
/// // …
/// try await transport.shutdown()
/// ```
public final class AsyncHTTPClientTransport: Transport {
    /// How the transport's client is set up.
    public struct Configuration: Sendable {
        /// The largest body accepted; a larger one fails as an invalid response.
        public var maximumBodySize: Int
        /// The HTTP versions offered: `.automatic` negotiates HTTP/2 over TLS, `.http1Only` never does.
        public var httpVersion: HTTPClient.Configuration.HTTPVersion
        /// How long an unused pooled connection is kept.
        public var idleTimeout: TimeAmount
        /// Trust and identity settings for TLS; `nil` uses the system's trust roots.
        public var tlsConfiguration: TLSConfiguration?

        /// Creates a configuration.
        public init(
            maximumBodySize: Int = 32 * 1024 * 1024,
            httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
            idleTimeout: TimeAmount = .seconds(60),
            tlsConfiguration: TLSConfiguration? = nil
        ) {
            self.maximumBodySize = maximumBodySize
            self.httpVersion = httpVersion
            self.idleTimeout = idleTimeout
            self.tlsConfiguration = tlsConfiguration
        }
    }

    private let client: HTTPClient
    private let maximumBodySize: Int

    /// Creates the transport with its own client; call ``shutdown()`` when done with it.
    public init(configuration: Configuration = Configuration()) {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration,
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(10)),
            decompression: .enabled(limit: .ratio(100))
        )
        clientConfiguration.httpVersion = configuration.httpVersion
        clientConfiguration.connectionPool.idleTimeout = configuration.idleTimeout
        // Fail fast on refused connections; the engine's retry policy decides about retrying.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        self.maximumBodySize = configuration.maximumBodySize
    }

    /// Closes every pooled connection; the transport cannot send afterwards.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// AsyncHTTPClient's deadline covers the whole request, body included.
    public var enforcesTimeout: Bool { true }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let scheme = request.head.scheme, let authority = request.head.authority else {
            throw RunwayError.invalidRequest(reason: "the request has no scheme or authority")
        }
        var outbound = HTTPClientRequest(url: "\(scheme)://\(authority)\(request.head.path ?? "/")")
        outbound.method = HTTPMethod(rawValue: request.head.method.rawValue)
        for field in request.head.headerFields {
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        if outbound.headers["accept-encoding"].isEmpty {
            outbound.headers.add(name: "accept-encoding", value: "gzip, deflate")
        }
        if let body = request.body {
            outbound.body = .bytes(ByteBuffer(bytes: body))
        }
        let timeout = TimeAmount.nanoseconds(
            request.timeout.components.seconds * 1_000_000_000 + request.timeout.components.attoseconds / 1_000_000_000)
        do {
            let response = try await client.execute(outbound, timeout: timeout)
            let buffer = try await response.body.collect(upTo: maximumBodySize)
            let body = Data(buffer.readableBytesView)
            let version = "HTTP/\(response.version.major)\(response.version.major >= 2 ? "" : ".\(response.version.minor)")"
            return TransportResponse(head: Self.head(of: response), body: body, httpVersion: version)
        } catch {
            throw Self.classify(error)
        }
    }

    static func head(of response: HTTPClientResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for header in response.headers {
            guard let name = HTTPField.Name(header.name) else { continue }
            // The body handed on is decoded; the wire's encoding and length no longer describe it.
            if name == .contentEncoding || name == .contentLength { continue }
            fields.append(HTTPField(name: name, value: header.value))
        }
        return HTTPResponse(status: .init(code: Int(response.status.code)), headerFields: fields)
    }

    static func classify(_ error: any Error) -> RunwayError {
        if let error = error as? RunwayError { return error }
        if error is CancellationError { return .cancelled }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled: return .cancelled
            case .deadlineExceeded, .readTimeout, .writeTimeout: return .timeout
            case .connectTimeout: return .noNetwork(reason: .unreachable)
            case .remoteConnectionClosed: return .connectionLost
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidRequest(reason: "\(error)")
            default: return .transport(description: "\(error)")
            }
        }
        if let error = error as? HTTPParserError {
            // The connection ended mid-message: the response was cut short on the wire.
            if case .invalidEOFState = error { return .connectionLost }
            return .invalidResponse(reason: "malformed HTTP: \(error)")
        }
        if let error = error as? NIOTooManyBytesError {
            return .invalidResponse(reason: "the body is larger than allowed (\(error))")
        }
        if let error = error as? NIOConnectionError {
            return classify(connectionFailures: error.connectionErrors.map(\.error), dnsFailed: error.dnsAError != nil)
        }
        if let error = error as? IOError { return classify(errno: error.errnoCode) }
        if let error = error as? ChannelError, case .connectTimeout = error { return .noNetwork(reason: .unreachable) }
        if error is NIOConnectionError || String(describing: error).contains("connectionRefused") {
            return .noNetwork(reason: .connectionRefused)
        }
        return .transport(description: String(describing: error))
    }

    private static func classify(connectionFailures: [any Error], dnsFailed: Bool) -> RunwayError {
        if connectionFailures.isEmpty { return .noNetwork(reason: .dnsFailure) }
        for failure in connectionFailures {
            if let failure = failure as? IOError { return classify(errno: failure.errnoCode) }
        }
        return .noNetwork(reason: dnsFailed ? .dnsFailure : .unreachable)
    }

    private static func classify(errno code: CInt) -> RunwayError {
        switch code {
        case ECONNREFUSED: return .noNetwork(reason: .connectionRefused)
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return .noNetwork(reason: .unreachable)
        case ECONNRESET, EPIPE: return .connectionLost
        default: return .transport(description: "I/O error \(code)")
        }
    }
}
