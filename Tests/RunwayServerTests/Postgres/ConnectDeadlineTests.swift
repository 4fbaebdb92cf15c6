import Foundation
import PostgresNIO
@testable import RunwayServer
import RunwayTestSupport
import Testing

/// `PostgresCollectorDatabase.connect`'s deadline (``TimeBound``, tested on its own in
/// `TimeBoundTests`) ends the connect even when the work it bounds never notices: beside a busy
/// suite, seven connects whose client was stopped at the deadline waited for ever on
/// PostgresNIO's request for a connection.
@Suite("A connect's deadline", .timeLimit(.minutes(10)))
struct ConnectDeadlineTests {
    @Test("a connect that cannot connect ends as Unreachable at its deadline")
    func unreachable() async throws {
        let socket = try LoopbackSocket()
        defer { socket.close() }
        // A port bound and never listening: every connection is refused, and the pool tries again.
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: socket.port, username: "runway", password: nil, database: "postgres", tls: .disable)
        await #expect(throws: PostgresCollectorDatabase.Unreachable.self) {
            _ = try await PostgresCollectorDatabase.connect(
                configuration, logger: PostgresCollectorTests.quiet, timeout: .milliseconds(500))
        }
    }
}
