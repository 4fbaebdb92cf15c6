import Foundation
import HTTPTypes
import NIOSSL
import Runway
import RunwayNIO
import RunwayServer
import Testing

@Suite("Transport security: TLS, public-key pinning, plain HTTP")
@MainActor
struct TransportSecurityTests {
    /// Runs `body` against an HTTPS demo server with a certificate made now, and an engine whose
    /// AsyncHTTPClient transport trusts `trustedAuthority` (the server's own by default) and
    /// holds `pins` for 127.0.0.1.
    func withTLSServer(
        pins: ((_ serverPin: String) -> PublicKeyPins?)? = nil, trustServer: Bool = true,
        _ body: (Engine, DemoServer) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.pinnedServerIdentity()
        let server = try await DemoServer.start(tls: identity.tls)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try (trustServer ? authority : TestCertificateAuthority()).rootCertificate()])
        let transport = AsyncHTTPClientTransport(
            configuration: .init(tlsConfiguration: tls, pins: pins?(identity.spkiPin).map { [$0] } ?? []))
        let engine = Engine(transport: transport)
        engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL]))
        try await withCleanup({
            try? await transport.shutdown()
            await server.stop()
        }) {
            try await body(engine, server)
        }
    }

    static let wrongPin = PublicKeyPins.pin(ofSPKI: Array("not the server's key".utf8))

    @Test("a server with a trusted certificate is accepted")
    func trusted() async throws {
        try await withTLSServer { engine, server in
            let response = try await APIManager(TestAPI(path: "/echo/tls"), engine: engine).load()
            #expect(response.json?["path"] == "/echo/tls")
            #expect(server.baseURL.hasPrefix("https://"))
        }
    }

    @Test("a server whose certificate chains to an untrusted authority is refused as a TLS failure")
    func untrusted() async throws {
        try await withTLSServer(trustServer: false) { engine, server in
            await #expect {
                try await APIManager(TestAPI(path: "/echo/tls"), engine: engine).load()
            } throws: { error in
                guard case .tlsFailure = error as? RunwayError else { return false }
                return true
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test("a pinned key is accepted, also when only a backup pin matches")
    func pinned() async throws {
        try await withTLSServer(pins: { PublicKeyPins(host: "127.0.0.1", primary: $0, backups: [Self.wrongPin]) }) { engine, _ in
            _ = try await APIManager(TestAPI(path: "/echo/pinned"), engine: engine).load()
        }
        try await withTLSServer(pins: { PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [$0]) }) { engine, _ in
            _ = try await APIManager(TestAPI(path: "/echo/backup"), engine: engine).load()
        }
    }

    @Test("a key matching no pin fails as a pin failure, not as cancelled, before anything is sent")
    func wrongPin() async throws {
        try await withTLSServer(pins: { _ in PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [Self.wrongPin + "x"]) }) {
            engine, server in
            await #expect(throws: RunwayError.pinningFailed(host: "127.0.0.1")) {
                try await APIManager(TestAPI(path: "/echo/pinned"), engine: engine).load()
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    #if os(Linux)
    @Test("URLSession on Linux cannot check pins, so a pinned host fails closed")
    func urlSessionPinsFailClosed() async throws {
        let transport = URLSessionTransport(pins: [PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [])])
        let engine = Engine(transport: transport)
        engine.register(Service(id: .test, baseURLs: [.release: "https://127.0.0.1:9"]))
        await #expect {
            try await APIManager(TestAPI(path: "/x"), engine: engine).load()
        } throws: { error in
            guard case .tlsFailure(let reason) = error as? RunwayError else { return false }
            return reason.contains("AsyncHTTPClientTransport")
        }
    }
    #endif

    @Test(
        "plain HTTP to a host other than loopback is refused before any connection attempt",
        arguments: ["http://api.example.com", "http://10.0.0.8:8080/v1", "http://[2001:db8::1]"])
    func plainHTTPRefused(_ base: String) async throws {
        let spy = StubTransport(sampleData: ["TestAPI": .json(["ok": true])])
        let engine = Engine(transport: spy)
        engine.register(Service(id: .test, baseURLs: [.release: base]))
        await #expect {
            try await APIManager(TestAPI(path: "/x"), engine: engine).load()
        } throws: { error in
            guard case .insecureConnection = error as? RunwayError else { return false }
            return true
        }
        #expect(spy.requests.isEmpty, "the transport must not even be asked")
    }

    @Test("loopback may use plain HTTP, and a service may opt in for other hosts", arguments: [
        ("http://127.0.0.1:8080", false), ("http://127.8.9.10", false), ("http://localhost:1", false), ("http://[::1]:80", false),
        ("http://intranet.example.com", true),
    ])
    func plainHTTPAllowed(_ base: String, _ optIn: Bool) async throws {
        let spy = StubTransport(sampleData: ["TestAPI": .json(["ok": true])])
        let engine = Engine(transport: spy)
        engine.register(Service(id: .test, baseURLs: [.release: base], allowsInsecureHTTP: optIn))
        _ = try await APIManager(TestAPI(path: "/x"), engine: engine).load()
        #expect(spy.requests.count == 1)
    }
}
