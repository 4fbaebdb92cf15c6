import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayTestSupport
import Testing

/// What each transport does with a `POST` whose reused connection closes after the server read
/// it and before any answer came back (the answer a tunnel eats): AsyncHTTPClient reports the
/// lost connection, and the API's retry policy decides; Linux's URLSession (libcurl) sends the
/// request again by itself, on a new connection — its header fields, a signature's nonce among
/// them, without its body — and Runway never knows: a server that reads the fields first (a
/// signature verifier) refuses the repeated nonce with a 401; the demo server, waiting for the
/// rest, never handles the repeat, with a body or without, until the load's deadline ends it.
/// `Transports.md` says so.
@Suite("A request on a reused connection that dies before its answer", .timeLimit(.minutes(10)))
struct DeadConnectionResendTests {
    /// `POST /echo/order` with its key in `Idempotency-Key`, never retried by the engine.
    struct Order: API {
        var key: String
        var timeout: Duration
        var service: ServiceID { "resend" }
        var path: String { "/echo/order" }
        var method: HTTPRequest.Method { .post }
        var paramEncoding: ParamEncoding { .json }
        var retryPolicy: RetryPolicy { .never }
        var headers: HTTPFields {
            var fields = HTTPFields()
            if let name = HTTPField.Name("Idempotency-Key") { fields[name] = key }
            return fields
        }
    }

    /// Linux's URLSession with AsyncHTTPClient; Apple's URLSession is not tried here.
    static var kinds: [TransportKind] {
        #if canImport(FoundationNetworking)
        TransportKind.allCases
        #else
        [.asyncHTTPClient]
        #endif
    }

    /// `POST /echo/like`, no body, never retried by the engine; its key names it to the proxy.
    struct Like: API {
        var key: String
        var timeout: Duration = .seconds(300)
        var service: ServiceID { "resend" }
        var path: String { "/echo/like" }
        var method: HTTPRequest.Method { .post }
        var retryPolicy: RetryPolicy { .never }
        var headers: HTTPFields {
            var fields = HTTPFields()
            if let name = HTTPField.Name("Idempotency-Key") { fields[name] = key }
            return fields
        }
    }

    /// Runs `body` with an engine over `kind` whose `resend` service is a demo server behind a
    /// proxy that cuts the second request's answer: it goes out on the connection the first
    /// one reused.
    func withEngineBehindProxy(
        _ kind: TransportKind, _ body: (Engine, AnswerDroppingProxy, DemoServer) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start()
        let proxy = try await AnswerDroppingProxy.start(to: server.port, dropEvery: 2)
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let engine = Engine(transport: nio ?? URLSessionTransport())
        try engine.register(
            Service(
                id: "resend", baseURLs: [.release: "http://127.0.0.1:\(proxy.port)"],
                connection: .init(allowsInsecureHTTP: true)))
        try await withCleanup({
            try? await nio?.shutdown()
            await proxy.stop()
            await server.stop()
        }) {
            try await body(engine, proxy, server)
        }
    }

    /// With no body to lose, the platform's repeat might have been the whole request, applied
    /// twice; it is not: the server never handles it either, and the load ends at its deadline.
    @Test("a POST without a body: lost over AsyncHTTPClient; repeated by Linux's URLSession, never handled", arguments: kinds)
    func bodilessResend(_ kind: TransportKind) async throws {
        try await withEngineBehindProxy(kind) { engine, proxy, server in
            #expect((try? await engine.perform(Like(key: "first")).get())?.status == .ok)
            // Over URLSession the repeat waits out the load's deadline (the subject): one short
            // enough to wait out, long enough for the cut and the repeat on a loaded machine.
            let second = await engine.perform(Like(key: "second", timeout: kind == .urlSession ? .seconds(15) : .seconds(300)))
            switch kind {
            case .asyncHTTPClient:
                #expect(throws: RunwayError.connectionLost) { try second.get() }
                #expect(proxy.sentKeys == ["first", "second"])
                #expect(server.probe.count("/echo") == 2)
            case .urlSession:
                #expect(throws: RunwayError.timeout) { try second.get() }
                #expect(proxy.sentKeys == ["first", "second", "second"], "the platform sent it again by itself")
                #expect(server.probe.count("/echo") == 2, "the repeat was never handled")
            }
        }
    }

    @Test("sent once over AsyncHTTPClient (the loss is reported); sent again by Linux's URLSession itself", arguments: kinds)
    func resendOnDeadConnection(_ kind: TransportKind) async throws {
        try await withEngineBehindProxy(kind) { engine, proxy, server in
            let first = await engine.perform(Order(key: "first", timeout: .seconds(300)), params: ["n": .int(1)])
            #expect((try? first.get())?.status == .ok)
            // Over URLSession the repeat waits out the load's deadline (the subject): one short
            // enough to wait out, long enough for the cut and the repeat on a loaded machine.
            let timeout: Duration = kind == .urlSession ? .seconds(15) : .seconds(300)
            let second = await engine.perform(Order(key: "second", timeout: timeout), params: ["n": .int(2)])
            switch kind {
            case .asyncHTTPClient:
                #expect(throws: RunwayError.connectionLost) { try second.get() }
                #expect(proxy.sentKeys == ["first", "second"], "sent once; the retry policy decides about another try")
                #expect(server.probe.count("/echo") == 2)
            case .urlSession:
                // libcurl: "Connection died, retrying a fresh connect". The repeat carries the
                // header fields and not the body, and the server waits for it.
                #expect(throws: RunwayError.timeout) { try second.get() }
                #expect(proxy.sentKeys == ["first", "second", "second"], "the platform sent it again by itself")
                #expect(server.probe.count("/echo") == 2, "the repeat's body never came")
            }
        }
    }
}
