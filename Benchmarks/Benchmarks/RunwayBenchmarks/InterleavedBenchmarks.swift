import Benchmark
import Runway

/// Runway against raw AsyncHTTPClient in the same stretch of time.
///
/// The separate lines run one after the other, and on a shared two-core machine their figures
/// drift by more than the difference being measured. Here each sample alternates short runs of
/// the clients (20 loads each, the order rotated every round) against the same server and
/// reports the ratio of their throughputs, so a slower minute slows all alike.
///
/// Each line has two baselines, run in the same rounds: raw AsyncHTTPClient parsing with
/// `JSONSerialization` (what an app without Runway writes on Linux) and parsing with Runway's
/// own parser. Runway's parser beats `JSONSerialization` several times over, so the first ratio
/// credits the layer with its parser; the second leaves the parser out, and what is left under
/// 100 % is the layer's own cost.
enum InterleavedBenchmarks {
    /// One ratio, against the `JSONSerialization` baseline and against the Runway-parser one.
    struct Metrics {
        let serialization: BenchmarkMetric
        let runwayParser: BenchmarkMetric

        init(_ name: String) {
            serialization = .custom("\(name) ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
            runwayParser = .custom(
                "\(name) ÷ raw AHC + Runway's parser throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
        }
    }

    static let manager = Metrics("APIManager")
    static let managerReformed = Metrics("APIManager with a reformer")
    static let managerOffMain = Metrics("APIManager from a background task")
    static let mainActorHops = Metrics("Engine through a main-actor function, from a background task,")
    static let engine = Metrics("Engine")
    static let engineOverLoopClient = Metrics("Engine (baseline: one client a loop)")
    static let engineOnMain = Metrics("Engine from the main actor")
    static let concurrentEngine = Metrics("32 in flight: Engine")
    static let concurrentManager = Metrics("32 in flight: APIManager from the main actor")
    static let concurrentManagerOffMain = Metrics("32 in flight: APIManager from background tasks")
    static let mainActorFloorRatio = BenchmarkMetric.custom(
        "raw AHC + two main-actor round trips ÷ raw AHC throughput (%)", polarity: .prefersLarger, useScalingFactor: false)

    /// Runs a sample's work at `.high` priority: on a pool of Swift's with every thread free, as
    /// an app's work runs.
    ///
    /// ordo-one/benchmark runs an `async` body in a task of its own and blocks the runner's task
    /// — on a thread of Swift's pool — on a semaphore until the body ends. On two cores that leaves
    /// the body one of its pool's two threads: two 10 ms computations started together take 20 ms
    /// in a body at the default priority, 10.5 ms at `.high` (and 10 ms in a plain program). On
    /// Linux dispatch keeps a pool per priority, and `.high` work runs on the user-initiated one,
    /// which the runner's wait does not touch; on Apple platforms, `.high` is the priority of work
    /// an app starts from its main thread. Raw clients and Runway run there alike.
    static func onFullPool<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await Task(priority: .high) { try await work() }.value
    }

    static let rounds = 50
    static let loadsPerRun = 20

    static func register(_ fixture: Fixture) {
        func configuration(_ metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
            .init(metrics: metrics, scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
        }
        /// One line: `run` measures a sample against the fixture's engine over AsyncHTTPClient and
        /// returns its two ratios.
        func line(_ name: String, _ metrics: Metrics, _ run: @escaping @Sendable (Engine) async throws -> Ratios) {
            Benchmark(name, configuration: configuration([metrics.serialization, metrics.runwayParser])) { benchmark in
                guard let engine = fixture.nioEngine else { throw FixtureError.notStarted }
                let ratios = try await onFullPool { try await run(engine) }
                benchmark.measurement(metrics.serialization, ratios.serialization)
                benchmark.measurement(metrics.runwayParser, ratios.runwayParser)
            }
        }
        let raw: Baselines = (
            { try await fixture.rawAsyncHTTPClient() }, { try await fixture.rawAsyncHTTPClientRunwayParser() }
        )

        line("GET sequential, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from the main actor", manager) { engine in
            try await MainActorLoop.interleaved(engine: engine, fixture: fixture)
        }
        line("GET sequential, interleaved: Runway APIManager with a reformer ÷ raw AsyncHTTPClient making the same rows, both called from the main actor", managerReformed) { engine in
            try await MainActorLoop.interleavedRows(engine: engine, fixture: fixture)
        }
        line("GET sequential, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from a background task", managerOffMain) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratios(raw: raw, runway: { try await fixture.runwayManager(manager) })
        }
        // The floor of any main-actor object a background task awaits: into the main actor to
        // start the load, and into it again to land it. Both sides parse alike.
        let floor = Benchmark.Configuration(metrics: [mainActorFloorRatio], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
        Benchmark("GET sequential, interleaved: raw AsyncHTTPClient with a main-actor round trip before and after ÷ raw AsyncHTTPClient, from a background task", configuration: floor) { benchmark in
            let ratio = try await onFullPool {
                try await ratios(
                    raw: (raw.serialization, raw.serialization),
                    runway: {
                        await MainActor.run {}
                        try await fixture.rawAsyncHTTPClient()
                        await MainActor.run {}
                    })
            }
            benchmark.measurement(mainActorFloorRatio, ratio.serialization)
        }
        // The manager's own path for a background caller without its bookkeeping: into a
        // main-actor function, off it for the engine's work, back to land, back to the caller.
        line("GET sequential, interleaved: Runway Engine awaited through a main-actor function ÷ raw AsyncHTTPClient, from a background task", mainActorHops) { engine in
            try await ratios(raw: raw, runway: { try await MainActorLoop.engine(engine) })
        }
        line("GET sequential, interleaved: Runway Engine ÷ raw AsyncHTTPClient", engine) { engine in
            try await ratios(raw: raw, runway: { try await fixture.runwayEngine(engine) })
        }
        // The stricter baseline: the raw client as Runway's transport keeps its pool (one client a
        // loop) and places one host's loads (on the loop of its connection), so that it hands no
        // answer across threads either.
        line("GET sequential, interleaved: Runway Engine ÷ raw AsyncHTTPClient on one event loop with its connection", engineOverLoopClient) { engine in
            try await ratios(
                raw: (
                    { try await fixture.rawLoopAsyncHTTPClient(runwayParser: false) },
                    { try await fixture.rawLoopAsyncHTTPClient(runwayParser: true) }
                ),
                runway: { try await fixture.runwayEngine(engine) })
        }
        line("GET sequential, interleaved: Runway Engine ÷ raw AsyncHTTPClient, both called from the main actor", engineOnMain) { engine in
            try await MainActorLoop.interleavedEngine(engine: engine, fixture: fixture)
        }
        // 32 in flight: each run is a batch of loads kept 32 deep, alternating as above.
        // Each load a request of its own (`Fixture.numbers`): identical loads in flight at once
        // would share one request in Runway.
        let rawInFlight: Baselines = (
            inFlight { try await fixture.rawAsyncHTTPClient(distinct: true) },
            inFlight { try await fixture.rawAsyncHTTPClientRunwayParser(distinct: true) }
        )
        line("GET 32 in flight, interleaved: Runway Engine ÷ raw AsyncHTTPClient", concurrentEngine) { engine in
            try await ratios(
                rounds: 20, loadsPerRun: 1, raw: rawInFlight, runway: inFlight { try await fixture.runwayEngine(engine, distinct: true) })
        }
        line("GET 32 in flight, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from the main actor", concurrentManager) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratios(rounds: 20, loadsPerRun: 1,
                raw: (
                    inFlight { try await MainActorLoop.rawOnMain(fixture, distinct: true) },
                    inFlight { try await MainActorLoop.rawOnMainRunwayParser(fixture, distinct: true) }
                ),
                runway: inFlight { try await fixture.runwayManager(manager, distinct: true) })
        }
        line("GET 32 in flight, interleaved: Runway APIManager ÷ raw AsyncHTTPClient, both called from background tasks", concurrentManagerOffMain) { engine in
            let manager = await APIManager(ListingsAPI(), engine: engine)
            return try await ratios(rounds: 20, loadsPerRun: 1, raw: rawInFlight,
                runway: inFlight { try await fixture.runwayManager(manager, distinct: true) })
        }
        registerURLSession(fixture)
        TracingBenchmarks.register(fixture)
    }

    /// Runway's engine over its URLSession transport against raw URLSession (a session set up as
    /// the transport sets up its own: `URLSessionTransport.sessionConfiguration()`), the same two
    /// baselines: parsing with `JSONSerialization` and with Runway's parser.
    static func registerURLSession(_ fixture: Fixture) {
        for width in [1, 32] {
            let title = width == 1 ? "URLSession sequential" : "URLSession 32 in flight"
            let serialization = BenchmarkMetric.custom(
                "\(title): Engine ÷ raw URLSession throughput (%)", polarity: .prefersLarger, useScalingFactor: false)
            let runwayParser = BenchmarkMetric.custom(
                "\(title): Engine ÷ raw URLSession + Runway's parser throughput (%)", polarity: .prefersLarger,
                useScalingFactor: false)
            let configuration = Benchmark.Configuration(
                metrics: [serialization, runwayParser], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 12)
            Benchmark("\(title), interleaved: Runway Engine ÷ raw URLSession", configuration: configuration) { benchmark in
                let raw: Baselines = (
                    { try await fixture.rawURLSession() }, { try await fixture.rawURLSessionRunwayParser() }
                )
                let runway: @Sendable () async throws -> Void = { try await fixture.runwayEngine(fixture.sessionEngine) }
                let measured = try await onFullPool { () async throws -> Ratios in
                    width == 1
                        ? try await ratios(rounds: 25, raw: raw, runway: runway)
                        : try await ratios(
                            rounds: 10, loadsPerRun: 1,
                            raw: (
                                inFlight { try await fixture.rawURLSession(distinct: true) },
                                inFlight { try await fixture.rawURLSessionRunwayParser(distinct: true) }
                            ),
                            runway: inFlight { try await fixture.runwayEngine(fixture.sessionEngine, distinct: true) })
                }
                benchmark.measurement(serialization, measured.serialization)
                benchmark.measurement(runwayParser, measured.runwayParser)
            }
        }
    }

    /// A batch of loads kept `width` deep (4 batches' worth of loads): one run of an in-flight line.
    static func inFlight(width: Int, _ load: @escaping @Sendable () async throws -> Void) -> @Sendable () async throws -> Void {
        { try await Fixture.inFlight(width, total: width * 4, load) }
    }

    /// ``inFlight(width:_:)`` 32 deep.
    static func inFlight(_ load: @escaping @Sendable () async throws -> Void) -> @Sendable () async throws -> Void {
        inFlight(width: 32, load)
    }

    /// The two raw runs a line is measured against: parsing with `JSONSerialization`, and with
    /// Runway's parser. A line whose Runway run is called from the main actor makes these
    /// `@MainActor` closures: a plain `@Sendable` closure is nonisolated, and calling it from the
    /// main actor would add a hop off it and back that the Runway run does not make.
    typealias Baselines = (
        serialization: @Sendable () async throws -> Void, runwayParser: @Sendable () async throws -> Void
    )
    /// Raw time over Runway's time against each baseline, in percent.
    typealias Ratios = (serialization: Int, runwayParser: Int)

    /// Raw time over Runway's time for the same number of loads, in percent, against each
    /// baseline: above 100, Runway served more loads per second than the raw client in the same
    /// stretch. The three runs of a round go in an order rotated every round.
    static func ratios(
        isolation: isolated (any Actor)? = #isolation, rounds: Int = rounds, loadsPerRun: Int = loadsPerRun,
        raw: Baselines, runway: @escaping () async throws -> Void
    ) async throws -> Ratios {
        let times = try await interleavedTimes(
            rounds: rounds, loadsPerRun: loadsPerRun, runs: [raw.serialization, raw.runwayParser, runway])
        SampleTimes.note(times, loads: rounds * loadsPerRun)
        return (percent(times[0], of: times[2]), percent(times[1], of: times[2]))
    }

    /// `base` over `time`, in percent: above 100, `time` was the faster.
    static func percent(_ base: Duration, of time: Duration) -> Int { Int((base / time * 100).rounded()) }

    /// The total time of each of `runs` over `rounds` rounds of `loadsPerRun` calls each, the
    /// order of the runs rotated every round.
    static func interleavedTimes(
        isolation: isolated (any Actor)? = #isolation, rounds: Int, loadsPerRun: Int, runs: [() async throws -> Void]
    ) async throws -> [Duration] {
        let clock = ContinuousClock()
        var times = [Duration](repeating: .zero, count: runs.count)
        for round in 0..<rounds {
            for step in 0..<runs.count {
                let which = (round + step) % runs.count
                let start = clock.now
                for _ in 0..<loadsPerRun { try await runs[which]() }
                times[which] += clock.now - start
            }
        }
        return times
    }
}

extension MainActorLoop {
    /// The engine awaited from the main actor (its work off it, the answer back), against the
    /// raw client the same way: what the manager adds is the rest.
    static func interleavedEngine(engine: Engine, fixture: Fixture) async throws -> InterleavedBenchmarks.Ratios {
        try await InterleavedBenchmarks.ratios(
            raw: ({ @MainActor in try await rawOnMain(fixture) }, { @MainActor in try await rawOnMainRunwayParser(fixture) }),
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
    static func interleaved(engine: Engine, fixture: Fixture) async throws -> InterleavedBenchmarks.Ratios {
        let manager = APIManager(ListingsAPI(), engine: engine)
        return try await InterleavedBenchmarks.ratios(
            raw: ({ @MainActor in try await rawOnMain(fixture) }, { @MainActor in try await rawOnMainRunwayParser(fixture) }),
            runway: { try await fixture.runwayManager(manager) })
    }
}
