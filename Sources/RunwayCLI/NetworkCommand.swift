import ArgumentParser
import Foundation
import HTTPTypes
import Runway
import RunwayNIO

/// `runway network`: the network path as Runway sees it, and its changes — rtnetlink on Linux;
/// with `--get`, a load through an engine that follows the path (what the network-namespace
/// tests run inside a namespace whose link they take down).
struct NetworkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Print the network path (reachable, interfaces) and, with --watch, its next changes; with --get, load a URL through an engine that follows the path."
    )

    @Option(help: "Print this many changes after the current path, then exit.")
    var watch = 0

    @Option(help: "Load this URL (GET, no retries) through an engine that follows the network path, and print how the load ended.")
    var get: String?

    @Option(help: "The load's timeout, in seconds.")
    var timeout = 30

    @Option(help: "The transport the load goes over: asynchttpclient or urlsession.")
    var transport = "asynchttpclient"

    func run() async throws {
        let monitor = NetworkMonitor.system()
        let changes = monitor.changes()
        Self.print(monitor.path)
        if let get {
            try await load(get, following: monitor)
        }
        var seen = 0
        if watch > 0 {
            for await path in changes {
                Self.print(path)
                seen += 1
                if seen == watch { break }
            }
        }
        monitor.stop()
    }

    /// Loads `url` and prints one line: `{"outcome":"success","status":200}`,
    /// `{"outcome":"noNetwork.unreachable"}`, `{"outcome":"timeout"}` or another error.
    private func load(_ url: String, following monitor: NetworkMonitor) async throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else {
            throw ValidationError("\(url) is not an absolute URL")
        }
        let origin = "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"
        let nio = transport == "urlsession" ? nil : AsyncHTTPClientTransport()
        guard nio != nil || transport == "urlsession" else {
            throw ValidationError("--transport is asynchttpclient or urlsession, not \(transport)")
        }
        let engine = Engine(transport: nio ?? URLSessionTransport(), network: monitor)
        try engine.register(Service(id: "network", baseURLs: [.release: origin], connection: .init(allowsInsecureHTTP: true)))
        Self.write(#"{"load":"started"}"#)
        let result = await engine.perform(
            PathAPI(path: components.percentEncodedPath, timeout: .seconds(max(timeout, 1))), params: [:])
        try await nio?.shutdown()
        switch result {
        case .success(let response): Self.write(#"{"outcome":"success","status":\#(response.response.status.code)}"#)
        case .failure(.noNetwork(let reason)): Self.write(#"{"outcome":"noNetwork.\#(reason.rawValue)"}"#)
        case .failure(.timeout): Self.write(#"{"outcome":"timeout"}"#)
        case .failure(let error):
            let text = String(describing: error).replacingOccurrences(of: "\"", with: "'")
            Self.write(#"{"outcome":"error","error":"\#(text)"}"#)
        }
    }

    /// One URL's path, raw, never retried: the line says what the first attempt met.
    private struct PathAPI: API {
        var service: ServiceID { "network" }
        var path: String
        var method: HTTPRequest.Method { .get }
        var timeout: Duration
        var responseFormat: ResponseFormat { .raw }
        var retryPolicy: RetryPolicy { .never }
    }

    /// One JSON line, written unbuffered: a parent process reads it through a pipe at once.
    static func print(_ path: NetworkPath) {
        let interfaces = path.interfaces.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        write(#"{"reachable":\#(path.isReachable),"interfaces":[\#(interfaces)],"expensive":\#(path.isExpensive),"constrained":\#(path.isConstrained)}"#)
    }

    private static func write(_ line: String) {
        StandardStream.output.write(line + "\n")
    }
}
