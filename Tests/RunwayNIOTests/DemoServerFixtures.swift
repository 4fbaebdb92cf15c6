import AsyncHTTPClient
import RunwayDemoServer
import RunwayNIO
import RunwayTestSupport

/// Runs `body` with a demo server and an app's own AsyncHTTPClient, both stopped afterwards.
func withServerAndClient(_ body: (DemoServer, HTTPClient) async throws -> Void) async throws {
    let server = try await DemoServer.start()
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    try await withCleanup({
        try? await client.shutdown()
        await server.stop()
    }) {
        try await body(server, client)
    }
}

/// Runs `body` with a demo server and a transport of its own, both stopped afterwards.
func withServerAndTransport(_ body: (DemoServer, AsyncHTTPClientTransport) async throws -> Void) async throws {
    let server = try await DemoServer.start()
    let transport = AsyncHTTPClientTransport()
    try await withCleanup({
        try? await transport.shutdown()
        await server.stop()
    }) {
        try await body(server, transport)
    }
}
