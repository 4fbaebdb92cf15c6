import ArgumentParser
import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayStorage

/// `runway oplog`: operation logs from the command line — what a collector holds, and a client
/// that records and uploads without end (the process the crash tests kill).
struct OplogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oplog",
        abstract: "Operation logs: a collector's contents, and a client that records and uploads.",
        subcommands: [Stats.self, Soak.self]
    )

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print what a collector holds (GET /oplog/stats).")

        @Option(help: "The server running the collector, such as http://127.0.0.1:8080.")
        var server: String

        @OptionGroup var key: CollectorKey

        func run() async throws {
            let nio = AsyncHTTPClientTransport()
            let engine = Engine(transport: nio)
            try engine.register(
                Service(
                    id: "oplog", baseURLs: [.release: server], credentials: .init(signer: key.signer),
                    connection: .init(allowsInsecureHTTP: true)))
            let result = await engine.perform(CollectorStatsAPI())
            try await nio.shutdown()
            let response = try result.get()
            let events = response.json?["events"]?.intValue ?? 0
            print("events: \(events)")
            for entry in response.json?["byName"]?.arrayValue ?? [] {
                print("  \(entry["name"]?.stringValue ?? "?"): \(entry["count"]?.intValue ?? 0)")
            }
        }
    }

    /// Records events one after another, each committed before the next, and prints
    /// `committed <id>` for each as soon as its commit is acknowledged; uploads run as usual.
    /// With `--drain`, records nothing: uploads what earlier runs left and exits.
    struct Soak: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record and upload operation-log events until killed (or drain what is left).")

        @Option(help: "The server running the collector.")
        var server: String

        @Option(help: "The storage container's root folder (the queue lives in its application support).")
        var container: String

        @OptionGroup var key: CollectorKey

        @Option(help: "Stop after this many events (default: never).")
        var count: Int = .max

        @Flag(help: "Record nothing: upload what earlier runs left, print the status as JSON, exit.")
        var drain = false

        func run() async throws {
            let nio = AsyncHTTPClientTransport()
            let engine = Engine(transport: nio)
            try engine.register(
                Service(
                    id: "oplog", baseURLs: [.release: server], credentials: .init(signer: key.signer),
                    connection: .init(allowsInsecureHTTP: true)))
            var policy = OperationLog.Policy()
            policy.maximumAge = .milliseconds(200)
            policy.baseBackoff = .milliseconds(20)
            policy.maximumBackoff = .milliseconds(200)
            policy.retryPolicy = .never
            let log = try OperationLog(
                engine: engine, service: "oplog", container: Container(root: URL(fileURLWithPath: container)),
                policy: policy)
            if drain {
                try await Self.flushPatiently(log)
                let status = try await log.status()
                print(#"{"pending":\#(status.pending),"inFlight":\#(status.inFlight),"uploaded":\#(status.uploaded),"dropped":\#(status.dropped),"refused":\#(status.refused),"abandoned":\#(status.abandoned)}"#)
            } else {
                var recorded = 0
                while recorded < count {
                    let id = try await log.recordCommitted("soak.tick", payload: ["n": .int(recorded)])
                    StandardStream.output.write("committed \(id)\n")
                    recorded += 1
                }
                try await log.flush()
            }
            await log.close()
            try await nio.shutdown()
        }

        /// Flushes, trying again through up to 100 failed uploads (the collector may refuse some).
        static func flushPatiently(_ log: OperationLog) async throws {
            for _ in 1..<100 {
                if (try? await log.flush()) != nil { return }
            }
            try await log.flush()
        }
    }
}

/// `GET /oplog/stats` of a collector.
struct CollectorStatsAPI: API {
    var service: ServiceID { "oplog" }
    var path: String { "/oplog/stats" }
    var method: HTTPRequest.Method { .get }
}
