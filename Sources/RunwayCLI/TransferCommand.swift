import ArgumentParser
import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayStorage

/// `runway transfer`: one upload or download through Runway, with what it cost this process in
/// memory — how the tests show that a large file streams instead of sitting in memory.
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Upload or download one file through Runway and report the process's peak memory.",
        subcommands: [Upload.self, Download.self]
    )

    enum TransportChoice: String, ExpressibleByArgument, CaseIterable {
        case asyncHTTPClient = "ahc"
        case urlSession = "urlsession"

        /// An engine over the chosen transport (following `network` when given), and what stops
        /// the transport.
        func makeEngine(network: NetworkMonitor? = nil) -> (Engine, @Sendable () async throws -> Void) {
            switch self {
            case .asyncHTTPClient:
                let nio = AsyncHTTPClientTransport()
                return (Engine(transport: nio, network: network), { try await nio.shutdown() })
            case .urlSession:
                return (Engine(transport: URLSessionTransport(), network: network), {})
            }
        }
    }

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a file as the body, or as a multipart form's file part.")

        @Argument(help: "The file to send.")
        var file: String

        @Option(help: "The URL to send it to (POST).")
        var to: String

        @Flag(help: "Send it as the file part of a multipart/form-data form.")
        var multipart = false

        @Option(help: "The transport: ahc or urlsession.")
        var transport: TransportChoice = .asyncHTTPClient

        func run() async throws {
            let (engine, shutdown, path, params) = try TransferCommand.engine(for: to, transport: transport)
            let url = URL(fileURLWithPath: file)
            let body: RequestBody
            if multipart {
                var form = MultipartForm()
                form.append("runway transfer", name: "caption")
                form.append(fileAt: url, name: "file")
                body = .multipart(form)
            } else {
                body = .file(url)
            }
            let before = TransferCommand.peakResidentBytes()
            let upload = engine.upload(TransferAPI(path: path, method: .post), params: params, body: body)
            let progressUpdates = Task { await upload.progress.reduce(0) { count, _ in count + 1 } }
            let result: Result<RawResponse, RunwayError>
            do { result = .success(try await upload.value) } catch { result = .failure(error) }
            let updates = await progressUpdates.value
            try await shutdown()
            switch result {
            case .success(let response):
                TransferCommand.report([
                    "status": response.status.code, "progressUpdates": updates,
                    "response": String(decoding: response.body, as: UTF8.self), "peakBeforeBytes": before,
                ])
            case .failure(let error):
                throw TransferFailed(message: "the upload failed: \(error)")
            }
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Download a URL into a container's caches role.")

        @Argument(help: "The URL to download.")
        var url: String

        @Option(help: "The container root to download into.")
        var root: String

        @Option(help: "The path inside the caches role.")
        var path = "downloads/file"

        @Option(help: "The transport: ahc or urlsession.")
        var transport: TransportChoice = .asyncHTTPClient

        func run() async throws {
            let (engine, shutdown, apiPath, params) = try TransferCommand.engine(for: url, transport: transport)
            let container = Container(root: URL(fileURLWithPath: root, isDirectory: true))
            let before = TransferCommand.peakResidentBytes()
            let download = engine.download(
                TransferAPI(path: apiPath, method: .get), params: params, to: .caches(path, in: container))
            let result: Result<DownloadedFile, RunwayError>
            do { result = .success(try await download.value) } catch { result = .failure(error) }
            try await shutdown()
            switch result {
            case .success(let file):
                TransferCommand.report([
                    "file": file.url.path, "bytes": file.byteCount, "resumedFrom": file.resumedFrom, "peakBeforeBytes": before,
                ])
            case .failure(let error):
                throw TransferFailed(message: "the download failed: \(error)")
            }
        }
    }

    /// A transfer that did not succeed; the message says why.
    struct TransferFailed: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// An API for one URL's path, with a timeout fit for large files.
    struct TransferAPI: API {
        var service: ServiceID { "transfer" }
        var path: String
        var method: HTTPRequest.Method
        var name: String { "Transfer" }
        var timeout: Duration { .seconds(600) }
        var responseFormat: ResponseFormat { .raw }
        var retryPolicy: RetryPolicy { .never }
    }

    /// An engine whose one service is `url`'s origin, and the path below it.
    static func engine(
        for url: String, transport choice: TransportChoice
    ) throws -> (Engine, @Sendable () async throws -> Void, String, Parameters) {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else {
            throw ValidationError("\(url) is not an absolute URL")
        }
        let origin = "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"
        let path = components.percentEncodedPath
        var params: Parameters = [:]
        for item in components.queryItems ?? [] { params[item.name] = .string(item.value ?? "") }
        let (engine, shutdown) = choice.makeEngine()
        try engine.register(Service(id: "transfer", baseURLs: [.release: origin]))
        return (engine, shutdown, path, params)
    }

    /// Prints `fields` and the process's peak resident memory as one JSON line.
    static func report(_ fields: [String: Any]) {
        var fields = fields
        fields["peakResidentBytes"] = peakResidentBytes()
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        print(String(decoding: data, as: UTF8.self))
    }

    /// The most memory this process has held resident since it started.
    ///
    /// On Linux, `getrusage`'s figure is wrong for this: a process spawned with `vfork`
    /// (`posix_spawn`) inherits its parent's resident size at `exec`, so a child of a large test
    /// process reports the parent's size. `VmHWM` belongs to the process's own address space.
    static func peakResidentBytes() -> Int {
        #if os(Linux)
        if let kilobytes = ProcessStatus.kilobytes("VmHWM") { return kilobytes * 1024 }
        #endif
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)  // bytes on Darwin
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #endif
    }
}
