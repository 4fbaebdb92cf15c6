import ArgumentParser
import Foundation
import HTTPTypes
import Runway
import RunwayStorage

/// `runway outbox`: a client that places orders through an ``Outbox`` against `runway serve
/// --demo` — the process the outbox's crash tests kill.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Place orders through a durable outbox (the client the crash tests kill).",
        subcommands: [Orders.self]
    )

    /// Enqueues orders one after another (each committed before the next), printing
    /// `enqueued <queue> <position> <key>` as each enqueue returns, `done <key>` as each is
    /// answered and `failed <key> <error>` as one is given up; then waits until the outbox is
    /// empty and prints its summary as JSON: `{"left": 0}`, with `failed` (the items given up)
    /// when there were any.
    struct Orders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enqueue orders, send them, and wait until every one is answered.")

        @Option(help: "The server (`runway serve --demo`).")
        var server: String

        @Option(help: "The storage container's root folder (the outbox lives in its application support).")
        var container: String

        @OptionGroup var key: CollectorKey

        @Option(help: "How many orders to enqueue in this run (0: only send what earlier runs left).")
        var count = 0

        @Option(help: "How many ordered queues the orders are spread over.")
        var queues = 2

        @Option(help: "The position of this run's first order in each queue (runs after a kill go on from there).")
        var from = 0

        @Option(help: "The transport: ahc or urlsession.")
        var transport: TransferCommand.TransportChoice = .asyncHTTPClient

        @Option(help: "Milliseconds one try may take before it times out (and is tried again with its key).")
        var timeout = 1_500

        func run() async throws {
            // The device's path, as an app's would be: sends wait while nothing is reachable.
            let network = NetworkMonitor.system()
            let (engine, shutdown) = transport.makeEngine(network: network)
            try engine.register(
                Service(
                    id: "orders", baseURLs: [.release: server], credentials: .init(signer: key.signer),
                    connection: .init(allowsInsecureHTTP: true)))
            var policy = Outbox.Policy()
            policy.baseBackoff = .milliseconds(50)
            policy.maximumBackoff = .milliseconds(500)
            policy.retryPolicy = .never
            let outbox = try await Outbox.open(
                engine: engine, container: Container(root: URL(fileURLWithPath: container)), policy: policy)
            let updates = outbox.updates()
            let api = PlaceOrderAPI(timeout: .milliseconds(timeout))
            for index in 0..<count {
                let queue = "q\(index % max(queues, 1))"
                let position = from + index / max(queues, 1)
                let item = try await outbox.enqueue(
                    api, params: ["queue": .string(queue), "position": .int(position)], queue: OutboxQueue(queue))
                Self.say("enqueued \(queue) \(position) \(item.id)")
            }
            // Subscribed before the enqueues, so every answer after them is seen; what left
            // before the reading below is not waited for.
            var left = Set(try await outbox.items().map(\.id))
            var failed: [String] = []
            if !left.isEmpty {
                for await update in updates {
                    switch update.state {
                    case .done: Self.say("done \(update.item.id)")
                    case .failed(let error):
                        failed.append("\(update.item.id) \(error)")
                        Self.say("failed \(update.item.id) \(error)")
                    default: continue
                    }
                    left.remove(update.item.id)
                    if left.isEmpty { break }
                }
            }
            await outbox.close()
            network.stop()
            try await shutdown()
            guard !failed.isEmpty else { return Self.say(#"{"left": 0}"#) }
            let given = String(decoding: try JSONSerialization.data(withJSONObject: failed), as: UTF8.self)
            Self.say(#"{"left": 0, "failed": "# + given + "}")
        }

        /// One line, written at once: a parent reading the pipe sees it before a kill.
        static func say(_ line: String) {
            StandardStream.output.write(line + "\n")
        }
    }
}

/// `POST /orders` of the demo server.
struct PlaceOrderAPI: API {
    var timeout: Duration
    var service: ServiceID { "orders" }
    var path: String { "/orders" }
    var method: HTTPRequest.Method { .post }
    var name: String { "PlaceOrder" }
    var paramEncoding: ParamEncoding { .json }
}
