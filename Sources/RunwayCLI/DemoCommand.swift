import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Runway
import RunwayExamples
import RunwayNIO
import RunwayServer

/// `runway demo`: the seed's two uses of reformers, end to end over real HTTP.
///
/// It starts the demo server in-process, loads the three listing APIs (second-hand, rental,
/// new homes) through their managers, prints one normalised table through one reformer, and
/// the same data as map pins through a second reformer.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start the demo server, load three listing APIs and print them through two reformers."
    )

    @Flag(name: .long, help: "Print each request's log line.")
    var verbose = false

    @Flag(name: .long, help: "Print the engine's swift-metrics at the end.")
    var metrics = false

    @Option(name: .long, help: "The transport: nio (AsyncHTTPClient) or urlsession.")
    var transport: TransportChoice = .nio

    enum TransportChoice: String, ExpressibleByArgument {
        case nio
        case urlsession
    }

    func run() async throws {
        // The listing APIs are signed: the server admits only requests its verifier accepts.
        let verifier = SignatureVerifier<BasicRequestContext>(keys: [DemoSigningKey.keyID: [DemoSigningKey.secret]])
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("runway-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try SQLiteOperationLogStore(url: scratch.appendingPathComponent("collector.sqlite"))
        try await withDemoServer(signatureVerifier: verifier, collector: OperationLogCollector(store: store)) { server, nio in
            try await runDemo(
                baseURL: server.baseURL, port: server.port, transport: transport == .nio ? nio : URLSessionTransport(),
                scratch: scratch, store: store)
        }
    }

    @MainActor
    private func runDemo(
        baseURL: String, port: Int, transport: any Transport, scratch: URL, store: SQLiteOperationLogStore
    ) async throws {
        var logger = Logger(label: "runway")
        logger.logLevel = verbose ? .info : .warning
        let collected = DemoMetrics()
        let engine = Engine(transport: transport, logger: logger, metrics: EngineMetrics(factory: collected))
        engine.register(
            listingService(baseURL: baseURL, signer: HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret)))

        let managers: [any ListingLoading] = [
            APIManager(SecondHandListAPI(), engine: engine),
            APIManager(RentalListAPI(), engine: engine),
            APIManager(NewHomeListAPI(), engine: engine),
        ]
        print("Runway demo — server at \(baseURL), requests signed with key \(DemoSigningKey.keyID)\n")
        print("Listings, three APIs through one ListingRowsReformer:")
        print(pad("kind", 5) + pad("id", 6) + pad("name", 26) + pad("title", 24) + "price")
        var pins: [MapPin] = []
        for manager in managers {
            do {
                let rows = try await manager.loadRows()
                for row in rows {
                    print(pad(row.kind, 5) + pad(String(row.id), 6) + pad(row.name, 26) + pad(row.title, 24) + String(row.price))
                }
                pins += try await manager.pins()
            } catch {
                throw ValidationError("loading \(manager.apiName) failed: \(error.localizedMessage())")
            }
        }
        print("\nThe same data as map pins, through MapPinReformer (\(pins.count) pins, first 5):")
        for pin in pins.prefix(5) {
            print("  📍 \(pin.label) @ \(String(format: "%.3f", pin.latitude)), \(String(format: "%.3f", pin.longitude))")
        }
        print("\nDone: \(pins.count) listings from 3 APIs, 2 reformers, 1 engine.")
        try await DemoExtras.operationLogs(engine: engine, baseURL: baseURL, scratch: scratch, store: store)
        try await DemoExtras.endpoints(engine: engine, transport: transport, port: port)
        if metrics {
            print("\nMetrics (swift-metrics, as a backend such as Prometheus would receive them):")
            for line in collected.report() { print(line) }
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width - 1)) + " " : text + String(repeating: " ", count: width - text.count)
    }
}

/// A listing manager, whatever its API: what the demo needs of each.
@MainActor
protocol ListingLoading {
    var apiName: String { get }
    func loadRows() async throws(RunwayError) -> [ListingRow]
    func pins() async throws(RunwayError) -> [MapPin]
}

extension APIManager: ListingLoading where Endpoint: ListingAPI {
    func loadRows() async throws(RunwayError) -> [ListingRow] {
        try await firstPage()
        return try await fetchData(with: ListingRowsReformer())
    }

    func pins() async throws(RunwayError) -> [MapPin] {
        try await fetchData(with: MapPinReformer())
    }
}
