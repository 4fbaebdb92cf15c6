import Foundation
import Hummingbird

/// The HTTP benchmarks' server: this same executable started again in a process of its own
/// (on two cores, a server in the client's process takes the client's CPU), answering
/// `GET /listings` with the same precomputed 2.4 KB JSON list every time.
enum ListingServer {
    /// Set in the child's environment: run as the server instead of the benchmarks.
    static let modeVariable = "RUNWAY_BENCHMARK_SERVER"

    /// The body: a `{"code":0,"data":{"items":[…]}}` envelope of 16 listings, about 2.4 KB.
    static let body: Data = {
        let items = (1...16).map { index in
            [
                "id": index, "title": "Two-bedroom flat near line \(index % 9 + 1), south facing",
                "price": 5_200 + index * 35, "area": 68.5 + Double(index), "district": "Pudong",
            ] as [String: Any]
        }
        let envelope: [String: Any] = ["code": 0, "message": "ok", "data": ["items": items, "page": 1]]
        return (try? JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys])) ?? Data()
    }()

    /// Serves until the process is killed; prints the port first.
    static func serve() async throws {
        let router = Router()
        let payload = ByteBuffer(bytes: body)
        router.get("/listings") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: payload))
        }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "RunwayBenchmarks"),
            onServerRunning: { channel in
                // Written straight to the pipe: the parent waits for this line.
                FileHandle.standardOutput.write(Data("port \(channel.localAddress?.port ?? 0)\n".utf8))
            }
        )
        try await app.runService(gracefulShutdownSignals: [])
    }

    /// A server in a child process, and its base URL.
    final class Child: Sendable {
        let process: Process
        let baseURL: String

        init() throws {
            guard let executable = Bundle.main.executableURL else { throw ServerError.noExecutable }
            let process = Process()
            process.executableURL = executable
            var environment = ProcessInfo.processInfo.environment
            environment[ListingServer.modeVariable] = "1"
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var text = ""
            while !text.contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { throw ServerError.noPort }
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("port ") }),
                let port = Int(line.dropFirst("port ".count)), port > 0
            else { throw ServerError.noPort }
            self.process = process
            self.baseURL = "http://127.0.0.1:\(port)"
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    enum ServerError: Error {
        case noExecutable
        case noPort
    }
}
