import Foundation
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
        // Written unbuffered: a parent process reading the address through a pipe gets it now.
        FileHandle.standardOutput.write(Data("Runway demo server at \(server.baseURL) — Ctrl-C to stop\n".utf8))
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
        await server.stop()
    }
}
