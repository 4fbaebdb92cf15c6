import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Runway
import RunwayExamples
import RunwayNIO
import RunwayDemoServer
import RunwayServer

/// `runway demo`: the network layer, chapter by chapter, over real HTTP, with figures
/// measured in the run.
///
/// It starts the demo server in this process (or uses one started with `runway serve`), plays
/// an app against it, and exits 0 only when every chapter saw what it expected.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through Runway's network layer, chapter by chapter, against a real server.",
        discussion: "Chapters: " + DemoChapter.all.map(\.name).joined(separator: ", ")
    )

    @Flag(name: .long, help: "Print each request's log line.")
    var verbose = false

    @Flag(name: .long, help: "Print the engine's swift-metrics at the end.")
    var metrics = false

    @Flag(name: .long, help: "Print only a JSON summary of every chapter's figures.")
    var json = false

    @Option(name: .long, help: "Run only this chapter.")
    var chapter: String?

    @Option(name: .long, help: "A server started with `runway serve` (its base URL); chapters that need the server in this process are skipped.")
    var server: String?

    @Option(name: .long, help: "Write every request the demo sent as an HTTP Archive (HAR 1.2) to this file: open it in a browser's network panel.")
    var har: String?

    @Option(name: .long, help: "The transport: nio (AsyncHTTPClient) or urlsession.")
    var transport: TransportChoice = .nio

    enum TransportChoice: String, ExpressibleByArgument {
        case nio
        case urlsession
    }

    func validate() throws {
        if let chapter, !DemoChapter.all.contains(where: { $0.name == chapter }) {
            throw ValidationError(
                "no chapter \(chapter); the chapters are \(DemoChapter.all.map(\.name).joined(separator: ", "))")
        }
        if let server, URLComponents(string: server)?.host == nil {
            throw ValidationError("\(server) is not a base URL such as http://127.0.0.1:8080")
        }
    }

    func run() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("runway-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let passed: Bool
        if let server {
            let nio = AsyncHTTPClientTransport()
            do {
                passed = try await runChapters(
                    transport: transport == .nio ? nio : URLSessionTransport(), baseURL: server, server: nil, scratch: scratch)
            } catch {
                try? await nio.shutdown()
                throw error
            }
            try await nio.shutdown()
        } else {
            // The listing APIs are signed: the server admits only requests its verifier accepts.
            let verifier = SignatureVerifier<ServerRequestContext>(keys: [DemoSigningKey.keyID: [DemoSigningKey.secret]])
            let store = try SQLiteOperationLogStore(url: scratch.appendingPathComponent("collector.sqlite"))
            var result = false
            try await withDemoServer(signatureVerifier: verifier, collector: OperationLogCollector(store: store)) { server, nio in
                result = try await runChapters(
                    transport: transport == .nio ? nio : URLSessionTransport(), baseURL: server.baseURL, server: server,
                    scratch: scratch)
            }
            passed = result
        }
        if !passed { throw ExitCode(1) }
    }

    /// Runs the chosen chapters and prints the story (or the JSON summary); `true` when every
    /// chapter that ran saw what it expected.
    @MainActor
    private func runChapters(transport: any Transport, baseURL: String, server: DemoServer?, scratch: URL) async throws -> Bool {
        var logger = Logger(label: "runway")
        logger.logLevel = verbose ? .info : .critical
        let collected = DemoMetrics()
        let context = try DemoContext(
            transport: transport, baseURL: baseURL, server: server, scratch: scratch, logger: logger, metrics: collected)
        let console = DemoConsole(jsonOnly: json)
        let chapters = DemoChapter.all.filter { chapter == nil || $0.name == chapter }
        console.say(console.paint("Runway demo", "1") + " — the network layer of seed 003 against \(baseURL)"
            + (server == nil ? " (started with runway serve)" : " (in this process)")
            + ", over \(transport.supportsConnectAddress ? "AsyncHTTPClient" : "URLSession")")
        var summaries: [JSON] = []
        var failures: [String] = []
        var skipped = 0
        for (index, chapter) in chapters.enumerated() {
            let log = ChapterLog()
            let outcome: ChapterOutcome
            let started = ContinuousClock.now
            console.begin(chapter, number: index + 1, of: chapters.count)
            if chapter.needsInProcessServer, server == nil {
                outcome = .skipped("needs the server in this process (it watches the server side, or stands up servers of its own)")
            } else {
                do {
                    try await chapter.run(context, log)
                    outcome = .passed
                } catch let failure as DemoChapterFailure {
                    outcome = .failed(failure.description)
                } catch let error as RunwayError {
                    outcome = .failed(error.localizedMessage())
                } catch {
                    outcome = .failed(String(describing: error))
                }
            }
            let seconds = (ContinuousClock.now - started).milliseconds / 1000
            await console.end(chapter, number: index + 1, log: log, outcome: outcome, seconds: seconds)
            var summary: [String: JSON] = [
                "name": .string(chapter.name), "title": .string(chapter.title), "seconds": .double(seconds),
                "figures": .object(log.figures),
            ]
            switch outcome {
            case .passed: summary["status"] = "passed"
            case .failed(let reason):
                summary["status"] = "failed"
                summary["reason"] = .string(reason)
                failures.append("\(chapter.name): \(reason)")
            case .skipped(let reason):
                skipped += 1
                summary["status"] = "skipped"
                summary["reason"] = .string(reason)
            }
            summaries.append(.object(summary))
        }
        let requests = context.wire.total
        // The endpoint selector's probes go straight to the transport: they are not loads.
        let probes = context.wire.count("EndpointProbe")
        if let har {
            let url = URL(fileURLWithPath: har)
            try await context.recorder.writeHTTPArchive(to: url, creator: "Runway demo")
            if !json { console.say("Wrote \(context.recorder.exchanges.count) requests to \(url.path) (HAR 1.2); \(probes) endpoint probes are not loads and are not in it.") }
        }
        if metrics, !json {
            console.say()
            console.say("Metrics (swift-metrics, as a backend such as Prometheus would receive them):")
            for line in collected.report() { console.say(line) }
        }
        console.say()
        if failures.isEmpty {
            console.say(console.paint(
                "Done: \(chapters.count - skipped) chapter\(chapters.count - skipped == 1 ? "" : "s")"
                    + (skipped > 0 ? " (\(skipped) skipped)" : "")
                    + ", \(requests) requests on the wire, every chapter saw what it expected.", "32"))
        } else {
            console.say(console.paint("Failed: " + failures.joined(separator: "; "), "31"))
        }
        if json {
            var document: [String: JSON] = [
                "passed": .bool(failures.isEmpty), "server": .string(baseURL), "inProcess": .bool(server != nil),
                "transport": .string(transport.supportsConnectAddress ? "AsyncHTTPClient" : "URLSession"),
                "requests": .int(requests), "endpointProbes": .int(probes),
                "recordedRequests": .int(context.recorder.exchanges.count), "chapters": .array(summaries),
            ]
            if metrics { document["metrics"] = .array(collected.report().map { .string($0.trimmingCharacters(in: .whitespaces)) }) }
            print(String(decoding: try JSON.object(document).encoded(), as: UTF8.self))
        }
        return failures.isEmpty
    }
}
