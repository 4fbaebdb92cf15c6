import Benchmark
import Foundation
import HTTPTypes
import Logging
import Runway

/// Runway's own cost per load, with the network taken out: the engine and the manager over a
/// transport that answers from memory at once, so the figures are Runway's code alone
/// (building, signing-free sending, landing, parsing the same 2.4 KB envelope, delivery).
enum OverheadBenchmarks {
    /// Answers every request with the listing envelope, in memory.
    struct MemoryTransport: Transport {
        let response = TransportResponse(
            head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), body: ListingServer.body)
        /// It answers at once, so a cancellation can only have come before.
        var honoursCancellation: Bool { true }
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.cancellation?.isCancelled == true { throw RunwayError.cancelled }
            return response
        }
    }

    static func register() {
        // The request log filtered at .notice, as in a production app (and the HTTP lines).
        var logger = Logger(label: "runway")
        logger.logLevel = .notice
        let engine = Engine(transport: MemoryTransport(), logger: logger, metrics: nil)
        do {
            try engine.register(Service(id: .bench, baseURLs: [.release: "http://127.0.0.1:9"]))
        } catch {
            print("Overhead benchmarks skipped: \(error)")
            return
        }
        PlainLine.register("Overhead: Runway Engine over an in-memory transport") { iterations in
            for _ in iterations {
                let response = try await engine.perform(ListingsAPI()).get()
                guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
            }
        }
        PlainLine.register("Overhead: Runway Engine over an in-memory transport, caller on the main actor") { iterations in
            try await runEngine(iterations, engine: engine)
        }
        PlainLine.register("Overhead: Runway APIManager over an in-memory transport, caller on the main actor") { iterations in
            try await run(iterations, engine: engine)
        }
    }

    /// The floor for any delivery on the main actor: the engine's work off it, the answer back.
    @MainActor
    static func runEngine(_ iterations: Range<Int>, engine: Engine) async throws {
        for _ in iterations {
            let response = try await offMain(engine)
            guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
        }
    }

    @concurrent
    nonisolated static func offMain(_ engine: Engine) async throws -> RawResponse {
        try await engine.perform(ListingsAPI()).get()
    }

    @MainActor
    static func run(_ iterations: Range<Int>, engine: Engine) async throws {
        let manager = APIManager(ListingsAPI(), engine: engine)
        for _ in iterations {
            let response = try await manager.load()
            guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
        }
    }
}
