import Foundation
import Hummingbird
import HummingbirdHTTP2
import NIOSSL
import RunwayDemoServer

/// The HTTP benchmarks' server: this same executable started again in a process of its own
/// (on two cores, a server in the client's process takes the client's CPU), answering
/// `GET /listings` with the same precomputed 2.4 KB JSON list every time (and, for the profiling
/// mode's transfer ways, `GET /blob?size=N` with N bytes and `POST /sink` counting what it is
/// sent) — over plain HTTP/1.1
/// on one port, and over TLS on another, where ALPN offers HTTP/2 and HTTP/1.1 (the client's
/// configuration picks).
enum ListingServer {
    /// Set in the child's environment: run as the server instead of the benchmarks.
    static let modeVariable = "RUNWAY_BENCHMARK_SERVER"
    /// The TLS listener's leaf certificate and key (PEM), made by the parent's test authority.
    static let certificateVariable = "RUNWAY_BENCHMARK_TLS_CERTIFICATE"
    static let keyVariable = "RUNWAY_BENCHMARK_TLS_KEY"

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

    /// Serves until the process is killed; prints each listener's port first (`port N`,
    /// `tls-port N`).
    static func serve() async throws {
        let router = Router()
        let payload = ByteBuffer(bytes: body)
        router.get("/listings") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: payload))
        }
        // The body read and counted, never kept: the profiling mode's upload ways.
        router.post("/sink") { request, _ -> Response in
            var received = 0
            for try await part in request.body { received += part.readableBytes }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"bytes":\#(received)}"#)))
        }
        // `size` bytes of zeros, written 64 KiB at a time: the held-session way's download.
        let block = ByteBuffer(repeating: 0, count: 64 << 10)
        router.get("/blob") { request, _ -> Response in
            let size = request.uri.queryParameters.get("size", as: Int.self) ?? 0
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            headers[.contentLength] = String(max(size, 0))
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    var left = max(size, 0)
                    while left > 0 {
                        let count = min(left, block.readableBytes)
                        try await writer.write(block.getSlice(at: block.readerIndex, length: count) ?? ByteBuffer())
                        left -= count
                    }
                    try await writer.finish(nil)
                })
        }
        let plain = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "RunwayBenchmarks"),
            onServerRunning: { channel in
                // Written straight to the pipe: the parent waits for these lines.
                try? FileHandle.standardOutput.write(contentsOf: Data("port \(channel.localAddress?.port ?? 0)\n".utf8))
            }
        )
        let environment = ProcessInfo.processInfo.environment
        guard let certificate = environment[certificateVariable], let key = environment[keyVariable] else {
            return try await plain.runService(gracefulShutdownSignals: [])
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let secure = Application(
            router: router,
            server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "RunwayBenchmarks"),
            onServerRunning: { channel in
                try? FileHandle.standardOutput.write(contentsOf: Data("tls-port \(channel.localAddress?.port ?? 0)\n".utf8))
            }
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await plain.runService(gracefulShutdownSignals: []) }
            group.addTask { try await secure.runService(gracefulShutdownSignals: []) }
            try await group.waitForAll()
        }
    }

    /// A server in a child process, and its base URLs.
    final class Child: Sendable {
        let process: Process
        /// The server's standard input, held open while this process lives: the server exits
        /// when it closes.
        let lifeline: Pipe
        /// `http://127.0.0.1:<port>`.
        let baseURL: String
        /// `https://127.0.0.1:<port>` (HTTP/2 or HTTP/1.1 by ALPN); the leaf is for `127.0.0.1`
        /// and `localhost`.
        let tlsPort: Int

        /// Starts the server, its TLS listener presenting a leaf of `authority`.
        init(authority: TestCertificateAuthority) throws {
            guard let executable = Bundle.main.executableURL else { throw ServerError.noExecutable }
            let leaf = try authority.issueLeaf()
            let process = Process()
            process.executableURL = executable
            var environment = ProcessInfo.processInfo.environment
            environment[ListingServer.modeVariable] = "1"
            environment[ListingServer.certificateVariable] = leaf.certificatePEM
            environment[ListingServer.keyVariable] = leaf.privateKeyPEM
            process.environment = environment
            let output = Pipe()
            let lifeline = Pipe()
            process.standardOutput = output
            process.standardInput = lifeline
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.lifeline = lifeline
            var text = ""
            func port(_ prefix: String) -> Int? {
                text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }).flatMap { Int($0.dropFirst(prefix.count)) }
            }
            while port("port ") == nil || port("tls-port ") == nil {
                let chunk = output.fileHandleForReading.availableBytes()
                if chunk.isEmpty { throw ServerError.noPort }
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let plainPort = port("port "), plainPort > 0, let tlsPort = port("tls-port "), tlsPort > 0 else {
                throw ServerError.noPort
            }
            self.process = process
            self.baseURL = "http://127.0.0.1:\(plainPort)"
            self.tlsPort = tlsPort
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
