import Foundation
import HTTPTypes
import NIOSSL
@testable import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

@Suite("Transport security: TLS, public-key pinning, plain HTTP", .timeLimit(.minutes(10)))
@MainActor
struct TransportSecurityTests {
    /// Runs `body` against an HTTPS demo server with a certificate made now, and an engine whose
    /// AsyncHTTPClient transport trusts `trustedAuthority` (the server's own by default), with
    /// the service pinning 127.0.0.1 with `pins`.
    func withTLSServer(
        pins: ((_ serverPin: String) -> PublicKeyPins?)? = nil, trustServer: Bool = true,
        _ body: (Engine, DemoServer) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.pinnedServerIdentity()
        let server = try await DemoServer.start(tls: identity.tls)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try (trustServer ? authority : TestCertificateAuthority()).rootCertificate()])
        let transport = AsyncHTTPClientTransport(connections: .init(tlsConfiguration: tls))
        let engine = Engine(transport: transport)
        try engine.register(
            Service(
                id: .test,
                environment: .develop,
                baseURLs: [.develop: server.baseURL],
                connection: .init(pins: pins?(identity.spkiPin).map { [$0] } ?? [])))
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
            let response = try await APIManager(AdHocAPI(path: "/echo/tls"), engine: engine).load()
            #expect(response.json?["path"] == "/echo/tls")
            #expect(server.baseURL.hasPrefix("https://"))
        }
    }

    @Test("a server whose certificate chains to an untrusted authority is refused as a TLS failure")
    func untrusted() async throws {
        try await withTLSServer(trustServer: false) { engine, server in
            await #expect {
                try await APIManager(AdHocAPI(path: "/echo/tls"), engine: engine).load()
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
            _ = try await APIManager(AdHocAPI(path: "/echo/pinned"), engine: engine).load()
        }
        try await withTLSServer(pins: { PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [$0]) }) { engine, _ in
            _ = try await APIManager(AdHocAPI(path: "/echo/backup"), engine: engine).load()
        }
    }

    @Test("a key matching no pin fails as a pin failure, not as cancelled, before anything is sent")
    func wrongPin() async throws {
        try await withTLSServer(pins: { _ in PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [Self.wrongPin + "x"]) }) {
            engine, server in
            await #expect(throws: RunwayError.pinningFailed(host: "127.0.0.1")) {
                try await APIManager(AdHocAPI(path: "/echo/pinned"), engine: engine).load()
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test(
        "a pin on any certificate of the chain is refused at registration by a transport that sees only the leaf",
        arguments: PublicKeyPins.Scope.allCases)
    func scopeRefusedAtRegistration(_ scope: PublicKeyPins.Scope) async throws {
        let nio = AsyncHTTPClientTransport()
        try await withCleanup({ try? await nio.shutdown() }) {
            // URLSession checks both scopes on Apple platforms and none on Linux.
            var transports: [(any Transport, Bool)] = [(nio, scope == .leaf)]
            #if os(Linux)
            transports.append((URLSessionTransport(), false))
            #else
            transports.append((URLSessionTransport(), true))
            #endif
            for (transport, checks) in transports {
                let engine = Engine(transport: transport)
                let pins = PublicKeyPins(host: "127.0.0.1", primary: Self.wrongPin, backups: [], scope: scope)
                let service = Service(id: .test, baseURLs: [.release: "https://127.0.0.1:9"], connection: .init(pins: [pins]))
                if checks {
                    try engine.register(service)
                    #expect(engine.service(.test) != nil)
                } else {
                    #expect {
                        try engine.register(service)
                    } throws: { error in
                        guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
                        return reason.contains("127.0.0.1") && reason.contains(scope.description)
                            && reason.contains("cannot check")
                    }
                    #expect(engine.service(.test) == nil, "a refused service must not be registered")
                }
            }
        }
    }

    @Test("a request whose pins its transport cannot check fails closed, without a connection")
    func uncheckablePinsFailClosed() async throws {
        let server = try await DemoServer.start()
        let nio = AsyncHTTPClientTransport()
        try await withCleanup({
            try? await nio.shutdown()
            await server.stop()
        }) {
            let wrongPin = Self.wrongPin
            func request(_ scope: PublicKeyPins.Scope) -> TransportRequest {
                var request = TransportRequest(
                    head: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/echo/x"),
                    body: nil, timeout: .seconds(300), apiName: "Pinned")
                request.pins = PublicKeyPins(host: "127.0.0.1", primary: wrongPin, backups: [], scope: scope)
                return request
            }
            // AsyncHTTPClient sees the leaf only; Linux's URLSession sees no certificate at all.
            var cases: [(any Transport, TransportRequest)] = [(nio, request(.anyCertificateInChain))]
            #if os(Linux)
            cases.append((URLSessionTransport(), request(.leaf)))
            #endif
            for (transport, request) in cases {
                await #expect {
                    try await transport.send(request)
                } throws: { error in
                    guard case .tlsFailure(let reason) = error as? RunwayError else { return false }
                    return reason.contains("cannot check pins")
                }
            }
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test("two services may not pin one host differently")
    func conflictingPins() async throws {
        let engine = Engine(transport: StubTransport(sampleData: [:]))
        let one = PublicKeyPins(host: "api.example.com", primary: Self.wrongPin, backups: [])
        let other = PublicKeyPins(host: "API.example.com", primary: Self.wrongPin + "x", backups: [])
        try engine.register(Service(id: "one", baseURLs: [.release: "https://api.example.com"], connection: .init(pins: [one])))
        #expect {
            try engine.register(Service(id: "two", baseURLs: [.release: "https://api.example.com/v2"], connection: .init(pins: [other])))
        } throws: { error in
            guard case .invalidRequest(let reason) = error as? RunwayError else { return false }
            return reason.contains("api.example.com") && reason.contains("differently")
        }
        #expect(engine.service("two") == nil)
        // The same pins again, and a new version of the first service, are fine.
        try engine.register(Service(id: "two", baseURLs: [.release: "https://api.example.com/v2"], connection: .init(pins: [one])))
        try engine.register(Service(id: "one", baseURLs: [.release: "https://api.example.com"], connection: .init(pins: [one])))
    }

    @Test("the leaf rule and the chain rule decide from the same keys")
    func scopes() {
        let leaf: [UInt8] = Array("leaf key".utf8)
        let intermediate: [UInt8] = Array("intermediate key".utf8)
        let pinIntermediate = PublicKeyPins.pin(ofSPKI: intermediate)
        let onLeaf = PublicKeyPins(host: "h", primary: pinIntermediate, backups: [], scope: .leaf)
        let onChain = PublicKeyPins(host: "h", primary: pinIntermediate, backups: [], scope: .anyCertificateInChain)
        #expect(!onLeaf.accepts(chain: [leaf, intermediate]))
        #expect(onChain.accepts(chain: [leaf, intermediate]))
        #expect(onLeaf.accepts(chain: [intermediate, leaf]))
        #expect(!onChain.accepts(chain: []))
        #expect(!onLeaf.accepts(chain: []))
    }

    @Test(
        "plain HTTP to a host other than loopback is refused before any connection attempt",
        arguments: ["http://api.example.com", "http://10.0.0.8:8080/v1", "http://[2001:db8::1]"])
    func plainHTTPRefused(_ base: String) async throws {
        let spy = StubTransport(sampleData: ["AdHocAPI": .json(["ok": true])])
        let engine = Engine(transport: spy)
        try engine.register(Service(id: .test, baseURLs: [.release: base]))
        await #expect {
            try await APIManager(AdHocAPI(path: "/x"), engine: engine).load()
        } throws: { error in
            guard case .insecureConnection = error as? RunwayError else { return false }
            return true
        }
        #expect(spy.requests.isEmpty, "the transport must not even be asked")
    }

    @Test("loopback is localhost (any case, and its subdomains), 127.0.0.0/8 and ::1, brackets or not; nothing else")
    func loopbackHosts() {
        for host in ["localhost", "LocalHost", "api.localhost", "127.0.0.1", "127.255.0.9", "::1", "[::1]", "0:0:0:0:0:0:0:1", "[[::1]]"] {
            #expect(TransportSecurity.isLoopback(host: host), "\(host)")
        }
        for host in ["", "[]", "localhost.example.com", "128.0.0.1", "127.0.0", "127.0.0.1.5", "127.0.0.256", "::2", "example.com"] {
            #expect(!TransportSecurity.isLoopback(host: host), "\(host)")
        }
    }

    @Test("loopback may use plain HTTP, and a service may opt in for other hosts", arguments: [
        ("http://127.0.0.1:8080", false), ("http://127.8.9.10", false), ("http://localhost:1", false), ("http://[::1]:80", false),
        ("http://intranet.example.com", true),
    ])
    func plainHTTPAllowed(_ base: String, _ optIn: Bool) async throws {
        let spy = StubTransport(sampleData: ["AdHocAPI": .json(["ok": true])])
        let engine = Engine(transport: spy)
        try engine.register(Service(id: .test, baseURLs: [.release: base], connection: .init(allowsInsecureHTTP: optIn)))
        _ = try await APIManager(AdHocAPI(path: "/x"), engine: engine).load()
        #expect(spy.requests.count == 1)
    }
}
