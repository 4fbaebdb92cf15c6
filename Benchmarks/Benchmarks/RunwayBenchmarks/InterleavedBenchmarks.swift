import Benchmark
import Runway

/// Runway against raw AsyncHTTPClient in the same stretch of time.
///
/// The separate lines run one after the other, and on a shared two-core machine their figures
/// drift by more than the difference being measured. Here each sample alternates short runs of
/// both clients (20 loads each, the order swapped every round) against the same server and
/// reports the ratio of their throughputs, so a slower minute slows both alike.
enum InterleavedBenchmarks {
    static let managerRatio = BenchmarkMetric.custom(
        "APIManager ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let managerOffMainRatio = BenchmarkMetric.custom(
        "APIManager from a background task ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let mainActorFloorRatio = BenchmarkMetric.custom(
        "raw AHC + two main-actor round trips ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let concurrentEngineRatio = BenchmarkMetric.custom(
        "32 in flight: Engine ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let concurrentManagerRatio = BenchmarkMetric.custom(
        "32 in flight: APIManager ÷ raw AHC from the main actor throughput (%)", polarity: .prefersLarger,
        useScalingFactor: false)
    static let concurrentManagerOffMainRatio = BenchmarkMetric.custom(
        "32 in flight: APIManager from background tasks ÷ raw AHC throughput (%)", polarity: .prefersLarger,
        useScalingFactor: false)
    static let mainActorHopsRatio = BenchmarkMetric.custom(
        "Engine through a main-actor function ÷ raw AHC, from a background task (%)", polarity: .prefersLarger,
        useScalingFactor: false)
    static let engineRatio = BenchmarkMetric.custom(
        "Engine ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
    static let engineOnMainRatio = BenchmarkMetric.custom(
        "Engine from the main actor ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)

    static let rounds = 50
    static let loadsPerRun = 20

    static func register(_ fixture: Fixture) {
        /// One line: `run` measures a sample against the fixture's engine over AsyncHTTPClient.
        func line(_ name: String, _ metric: BenchmarkMetric, _ run: @escaping @Sendable (Engine) async throws -> Int) {
            let configuration = Benchmark.Configuration(
                metrics: [metric], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
            Benchmark(name, configuration: configuration) { benchmark in
                guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
                benchmark.measurement(metric, try await run(engine))
            }
        }
        line("GET sequential, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from the main actor", managerRatio) { engine in
            try await MainActorLoop.interleaved(engine: engine, fixture: fixture)
        }
        line("GET sequential, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from a background task", managerOffMainRatio) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratio(
                raw: { try await fixture.rawAsyncHTTPClient() }, runway: { try await fixture.runwayManager(manager) })
        }
        // The floor of any main-actor object a background task awaits: into the main actor to
        // start the load, and into it again to land it.
        line("GET sequential, interleaved: raw AsyncHTTPClient with a main-actor round trip before and after ÷ raw AsyncHTTPClient, from a background task", mainActorFloorRatio) { _ in
            try await ratio(
                raw: { try await fixture.rawAsyncHTTPClient() },
                runway: {
                    await MainActor.run {}
                    try await fixture.rawAsyncHTTPClient()
                    await MainActor.run {}
                })
        }
        // The manager's own path for a background caller without its bookkeeping: into a
        // main-actor function, off it for the engine's work, back to land, back to the caller.
        line("GET sequential, interleaved: Runway Engine awaited through a main-actor function ÷ raw AsyncHTTPClient, from a background task", mainActorHopsRatio) { engine in
            try await ratio(
                raw: { try await fixture.rawAsyncHTTPClient() }, runway: { try await MainActorLoop.engine(engine) })
        }
        line("GET sequential, interleaved: Runway Engine ÷ raw AsyncHTTPClient", engineRatio) { engine in
            try await ratio(raw: { try await fixture.rawAsyncHTTPClient() }, runway: { try await fixture.runwayEngine(engine) })
        }
        line("GET sequential, interleaved: Runway Engine ÷ raw AsyncHTTPClient, both called from the main actor", engineOnMainRatio) { engine in
            try await MainActorLoop.interleavedEngine(engine: engine, fixture: fixture)
        }
        // 32 in flight: each run is a batch of loads kept 32 deep, alternating as above.
        let batch = 128
        line("GET 32 in flight, interleaved: Runway Engine ÷ raw AsyncHTTPClient", concurrentEngineRatio) { engine in
            try await ratio(rounds: 20, loadsPerRun: 1,
                raw: { try await Fixture.inFlight(32, total: batch) { try await fixture.rawAsyncHTTPClient() } },
                runway: { try await Fixture.inFlight(32, total: batch) { try await fixture.runwayEngine(engine) } })
        }
        line("GET 32 in flight, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from the main actor", concurrentManagerRatio) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratio(rounds: 20, loadsPerRun: 1,
                raw: { try await Fixture.inFlight(32, total: batch) { try await MainActorLoop.rawOnMain(fixture) } },
                runway: { try await Fixture.inFlight(32, total: batch) { try await fixture.runwayManager(manager) } })
        }
        line("GET 32 in flight, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from background tasks", concurrentManagerOffMainRatio) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratio(rounds: 20, loadsPerRun: 1,
                raw: { try await Fixture.inFlight(32, total: batch) { try await fixture.rawAsyncHTTPClient() } },
                runway: { try await Fixture.inFlight(32, total: batch) { try await fixture.runwayManager(manager) } })
        }
    }

    /// Raw time over Runway's time for the same number of loads, in percent: above 100, Runway
    /// served more loads per second than the raw client in the same stretch.
    static func ratio(
        isolation: isolated (any Actor)? = #isolation, rounds: Int = rounds, loadsPerRun: Int = loadsPerRun,
        raw: () async throws -> Void, runway: () async throws -> Void
    ) async throws -> Int {
        let clock = ContinuousClock()
        var rawTime = Duration.zero
        var runwayTime = Duration.zero
        for round in 0..<rounds {
            for rawFirst in round.isMultiple(of: 2) ? [true, false] : [false, true] {
                let start = clock.now
                for _ in 0..<loadsPerRun {
                    if rawFirst { try await raw() } else { try await runway() }
                }
                if rawFirst { rawTime += clock.now - start } else { runwayTime += clock.now - start }
            }
        }
        return Int((rawTime / runwayTime * 100).rounded())
    }
}

extension MainActorLoop {
    /// The engine awaited from the main actor (its work off it, the answer back), against the
    /// raw client the same way: what the manager adds is the rest.
    static func interleavedEngine(engine: Engine, fixture: Fixture) async throws -> Int {
        try await InterleavedBenchmarks.ratio(
            raw: { try await rawOnMain(fixture) },
            runway: {
                let response = try await engine.perform(ListingsAPI()).get()
                guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
            })
    }

    /// The engine awaited from the main actor, the answer checked there.
    static func engine(_ engine: Engine) async throws {
        let response = try await engine.perform(ListingsAPI()).get()
        guard response.json?["code"]?.intValue == 0 else { throw FixtureError.unexpectedBody }
    }

    /// The manager and the raw client, each as a view controller would call it.
    static func interleaved(engine: Engine, fixture: Fixture) async throws -> Int {
        let manager = APIManager(ListingsAPI(), engine: engine)
        return try await InterleavedBenchmarks.ratio(
            raw: { try await rawOnMain(fixture) }, runway: { try await fixture.runwayManager(manager) })
    }
}
