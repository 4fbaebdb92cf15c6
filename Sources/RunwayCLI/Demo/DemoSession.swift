import Hummingbird
import RunwayNIO
import RunwayDemoServer
import RunwayServer

/// Runs `body` with an in-process demo server and an AsyncHTTPClient transport, then shuts both
/// down, whether `body` succeeded or not.
func withDemoServer(
    signatureVerifier: SignatureVerifier<ServerRequestContext>? = nil, collector: OperationLogCollector? = nil,
    _ body: (DemoServer, AsyncHTTPClientTransport) async throws -> Void
) async throws {
    let server = try await DemoServer.start(signatureVerifier: signatureVerifier, collector: collector)
    let nio = AsyncHTTPClientTransport()
    do {
        try await body(server, nio)
    } catch {
        try? await nio.shutdown()
        await server.stop()
        throw error
    }
    try await nio.shutdown()
    await server.stop()
}
