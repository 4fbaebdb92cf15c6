import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOSSL
import Runway
import RunwayNIO
import RunwayDemoServer

/// Raw AsyncHTTPClient and Runway's engine over it, configured alike (HTTP version, trust roots,
/// connections per host, no redirects), over TLS to the benchmarks' server: one pair speaking
/// HTTP/1.1 over up to 8 connections, one speaking HTTP/2 (AsyncHTTPClient multiplexes a host's
/// loads over one connection, up to the server's stream limit).
final class SecureClients: Sendable {
    /// Which HTTP version a pair is held to.
    enum Version: Sendable {
        case http1
        case http2
    }

    /// A raw client and an engine over a transport configured the same way.
    struct Pair: Sendable {
        let raw: HTTPClient
        let transport: AsyncHTTPClientTransport
        let engine: Engine
    }

    let tls: TLSConfiguration
    let port: Int
    let logger: Logger
    let http1: Pair
    let http2: Pair

    /// `https://127.0.0.1:<port>/listings`.
    var listingsURL: String { "https://127.0.0.1:\(port)/listings" }

    init(authority: TestCertificateAuthority, port: Int, logger: Logger) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try authority.rootCertificate()])
        self.tls = tls
        self.port = port
        self.logger = logger
        http1 = try Self.pair(.http1, tls: tls, port: port, logger: logger)
        http2 = try Self.pair(.http2, tls: tls, port: port, logger: logger)
    }

    func pair(_ version: Version) -> Pair { version == .http1 ? http1 : http2 }

    /// The raw client's configuration for `version`: the transport's own, from the same settings
    /// (no redirects, no decompression, its tracer off, the same pool).
    static func configuration(_ version: Version, tls: TLSConfiguration) -> HTTPClient.Configuration {
        AsyncHTTPClientTransport.clientConfiguration(connections(version, tls: tls))
    }

    /// The transport's settings for `version`.
    static func connections(_ version: Version, tls: TLSConfiguration) -> AsyncHTTPClientTransport.Connections {
        .init(
            httpVersion: version == .http1 ? .http1Only : .automatic, tlsConfiguration: tls,
            maximumConnectionsPerHost: Fixture.connections)
    }

    private static func pair(_ version: Version, tls: TLSConfiguration, port: Int, logger: Logger) throws -> Pair {
        let transport = AsyncHTTPClientTransport(connections: connections(version, tls: tls))
        let engine = Engine(transport: transport, logger: logger)
        try engine.register(Service(id: .bench, baseURLs: [.release: "https://127.0.0.1:\(port)"]))
        return Pair(
            raw: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration(version, tls: tls)),
            transport: transport, engine: engine)
    }

    func shutdown() async throws {
        for pair in [http1, http2] {
            try await pair.raw.shutdown()
            try await pair.transport.shutdown()
        }
    }

    // MARK: - One load each way, its body parsed and checked

    /// Raw AsyncHTTPClient, the body parsed by `JSONSerialization`.
    static func raw(_ client: HTTPClient, url: String) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        try Fixture.check(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)))
    }

    /// Raw AsyncHTTPClient, the body parsed by Runway's parser.
    static func rawRunwayParser(_ client: HTTPClient, url: String) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 1 << 20)
        try Fixture.check(try JSON(parsing: Data(body.readableBytesView)))
    }

    func raw(_ version: Version, distinct: Bool = false) async throws {
        try await Self.raw(pair(version).raw, url: Fixture.shared.numbered(listingsURL, distinct: distinct))
    }

    func rawRunwayParser(_ version: Version, distinct: Bool = false) async throws {
        try await Self.rawRunwayParser(pair(version).raw, url: Fixture.shared.numbered(listingsURL, distinct: distinct))
    }

    func runway(_ version: Version, distinct: Bool = false) async throws {
        try await Fixture.shared.runwayEngine(pair(version).engine, distinct: distinct)
    }
}
