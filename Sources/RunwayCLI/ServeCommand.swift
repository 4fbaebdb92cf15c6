import ArgumentParser
import RunwayServer

/// `runway serve`: run the demo server until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the demo server on 127.0.0.1 (an ephemeral port) until interrupted."
    )

    @Flag(help: "Do not log each request (for benchmarks).")
    var quiet = false

    func run() async throws {
        let server = try await DemoServer.start(logLevel: quiet ? .critical : .info)
        print("Runway demo server at \(server.baseURL) — Ctrl-C to stop")
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
        await server.stop()
    }
}
