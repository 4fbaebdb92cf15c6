import Crypto
import Foundation
#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim(3)`, which its Swift module does not export.
@_silgen_name("malloc_trim") private func mallocTrim(_ pad: Int) -> Int32
#endif
import HTTPTypes
import Logging
@testable import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// The guard for hostile answers: the real engine fed answers made from random bytes and from
/// mutations of real ones (``HostileAnswers``), through `StubTransport` and over a real socket to
/// each transport. Every load must end — a success or a `RunwayError` — within its API's
/// deadline, with a success never larger than the API's cap and memory bounded; never a trap.
///
/// The suite runs a short seeded run; `Fuzz/fuzz-answers.sh` runs a long one (the count and
/// the seed in `RUNWAY_FUZZ_INPUTS` and `RUNWAY_FUZZ_SEED`), each mode in a process of its own,
/// where resident memory is the run's alone and its growth is checked too. Each crash found
/// became a test (`HostileAnswerTests`, `URLSessionPlatformTrapTests`, the curl rows of
/// `ErrorClassificationTests`).
@Suite("Hostile answers: the fuzzer", .timeLimit(.minutes(240)))
struct HostileAnswerFuzzTests {
    /// The run's seed: fixed, unless the environment names another.
    static let seed = ProcessInfo.processInfo.environment["RUNWAY_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x52_75_6E_77_61_79
    /// The inputs of a long run, when one is asked for.
    static let longRun = ProcessInfo.processInfo.environment["RUNWAY_FUZZ_INPUTS"].flatMap(Int.init)
    /// One mode only (`stub`, `asyncHTTPClient`, `urlSession`), so that a long run's trap in one
    /// does not lose the others' counts.
    static let only = ProcessInfo.processInfo.environment["RUNWAY_FUZZ_ONLY"]
    /// A file each input's number is appended to as its load starts: after a trap, its last
    /// lines name the inputs in flight.
    static let trace = ProcessInfo.processInfo.environment["RUNWAY_FUZZ_TRACE"].flatMap { FileHandle(forWritingAtPath: $0) }

    static func traceStart(_ index: Int) {
        try? trace?.write(contentsOf: Data("\(index)\n".utf8))
    }

    /// The largest body the fuzzed APIs accept.
    static let cap = 64 * 1024

    /// A credential that is refreshed on every 401, and a signer whose clock a 401 may skew.
    struct FuzzAuthenticator: Authenticator {
        let refreshes = TestBox(0)
        func credential() async throws -> String? { "token-0" }
        func apply(_ token: String, to request: inout HTTPRequest) { request.headerFields[.authorization] = "Bearer \(token)" }
        func refresh(_ expired: String?) async throws -> String {
            refreshes.mutate { $0 += 1 }
            return "token-\(refreshes.value)"
        }
        func isAuthenticationFailure(_ response: HTTPResponse) -> Bool { response.status.code == 401 }
    }

    /// An engine over `transport` with everything a hostile answer can reach: a credential to
    /// refresh, a signer to re-sign after a clock skew, cookies, a memory cache, redirects and
    /// retries (whose waits pass at once).
    static func engine(over transport: any Transport, baseURL: String) throws -> Engine {
        let engine = Engine(
            transport: transport,
            cache: try ResponseCache(limits: .init(memoryCountLimit: 64, memoryCostLimit: 1 << 20)),
            logger: Logger(label: "runway.fuzz") { _ in SwiftLogNoOpLogHandler() },
            sleep: { _ in })
        try engine.register(
            Service(
                id: .test, environment: .develop, baseURLs: [.develop: baseURL],
                credentials: .init(
                    authentication: Authentication(FuzzAuthenticator()),
                    signer: HMACSigner(keyID: "fuzz", secret: SymmetricKey(size: .bits256)), cookies: CookieJar()),
                connection: .init(allowsInsecureHTTP: true)))
        return engine
    }

    /// One of four kinds of load for input `index`: a cached GET, a POST, a HEAD, a raw GET.
    static func api(for index: Int, timeout: Duration) -> AdHocAPI {
        var api = AdHocAPI(
            path: "/fuzz/\(index)", timeout: timeout, totalTimeout: timeout,
            retryPolicy: RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1)), maximumResponseSize: cap)
        switch index % 4 {
        case 0: api.cachePolicy = .memory(lifetime: .seconds(60), staleIfOffline: true)
        case 1: api.method = .post
        case 2:
            api.method = .head
            api.responseFormat = .raw
        default: api.responseFormat = .raw
        }
        return api
    }

    /// What a run saw: how many loads ended each way, and the worst time past the deadline.
    struct Tally: CustomStringConvertible {
        var outcomes: [String: Int] = [:]
        var loads = 0
        var slowest: Duration = .zero

        mutating func add(_ outcome: String, took: Duration) {
            outcomes[outcome, default: 0] += 1
            loads += 1
            slowest = max(slowest, took)
        }

        var description: String {
            "\(loads) loads, slowest \(slowest); " + outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
    }

    static func name(of result: Result<RawResponse, RunwayError>) -> String {
        switch result {
        case .success(let response): "success \(response.status.code)"
        // The catch-all cases with what they say: a fault no table names shows here.
        case .failure(.transport(let description)): "transport(\(description))"
        case .failure(.invalidRequest(let reason)): "invalidRequest(\(reason))"
        case .failure(let error): String(error.messageKey.dropFirst("error.".count))
        }
    }

    /// Checks one load's ending against the property, and counts it.
    static func check(
        _ result: Result<RawResponse, RunwayError>, took: Duration, deadline: Duration, input: Int, answer: @autoclosure () -> String,
        into tally: inout Tally
    ) {
        // Nothing cancels these loads: a cancellation is the harness's time running out, or a bug.
        if case .failure(.cancelled) = result { Issue.record("input \(input) ended as cancelled: \(answer())") }
        // The engine's deadline ends every load. The grace covers a busy machine's scheduling and
        // a transport winding down a cancelled exchange; a load that hangs never ends at all.
        // (The slowest load of each run is in its tally line.)
        #expect(took < deadline + .seconds(30), "input \(input) took \(took): \(answer())")
        if case .success(let response) = result {
            #expect(response.body.count <= cap, "input \(input) delivered \(response.body.count) bytes: \(answer())")
        }
        tally.add(name(of: result), took: took)
    }

    /// Loads `inputs` through `engine`, `concurrency` at a time, each checked as it ends.
    static func load(
        _ inputs: Range<Int>, concurrency: Int, on engine: Engine, timeout: Duration, into tally: inout Tally
    ) async {
        await withTaskGroup(of: (Int, Result<RawResponse, RunwayError>, Duration).self) { group in
            var next = inputs.lowerBound
            func start() {
                let index = next
                next += 1
                traceStart(index)
                group.addTask {
                    let started = ContinuousClock.now
                    let result = await engine.perform(api(for: index, timeout: timeout), params: ["i": .int(index)])
                    return (index, result, ContinuousClock.now - started)
                }
            }
            for _ in 0..<concurrency where next < inputs.upperBound { start() }
            while let (index, result, took) = await group.next() {
                check(
                    result, took: took, deadline: timeout, input: index,
                    answer: HostileAnswers.make(seed: seed, index: index).description, into: &tally)
                if next < inputs.upperBound { start() }
            }
        }
    }

    /// Resident memory after giving free heap pages back to the system (`malloc_trim`), so that
    /// what is counted is what is live, not what the allocator keeps for later.
    static var residentMegabytes: Int {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        #endif
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test("through StubTransport: every answer ends in a success or a typed error, in time, within the cap")
    func throughTheStub() async throws {
        if let only = Self.only, only != "stub" { return }
        let inputs = Self.longRun ?? 4_000
        let timeout = Duration.seconds(5)
        var tally = Tally()
        var before = Self.residentMegabytes
        // A new stub and engine per batch: the stub records every request it is sent.
        for batch in stride(from: 0, to: inputs, by: 2_000) {
            // Memory is measured from the end of the first batch: what grows after it, grows
            // with the count.
            if batch == 2_000 { before = Self.residentMegabytes }
            if Self.longRun != nil, batch % 10_000 == 0 { print("  \(batch) loads: resident \(Self.residentMegabytes) MB") }
            let stub = StubTransport { request in
                let index = Int(request.head.path?.split(separator: "/").last?.split(separator: "?").first ?? "") ?? -1
                return HostileAnswers.make(seed: Self.seed, index: index).transportResponse
            }
            let engine = try Self.engine(over: stub, baseURL: "http://fuzz.runway.test")
            await Self.load(batch..<min(batch + 2_000, inputs), concurrency: 16, on: engine, timeout: timeout, into: &tally)
        }
        let grown = Self.residentMegabytes - before
        print("hostile answers through StubTransport (seed \(Self.seed)): \(tally); resident +\(grown) MB")
        #expect(tally.loads == inputs)
        // Resident memory is the whole process's: measured alone (a long run, one mode to a
        // process), it is this run's; beside the rest of the suite, it is everyone's.
        if Self.longRun != nil {
            #expect(grown < 64, "memory stays bounded: +\(grown) MB over \(inputs) loads after the first 2,000")
        }
    }

    @Test("over a real socket: every answer ends in a success or a typed error, in time, within the cap", arguments: TransportKind.allCases)
    func overTheWire(_ kind: TransportKind) async throws {
        if let only = Self.only, only != kind.rawValue { return }
        let inputs = (Self.longRun.map { $0 / 10 }) ?? 400
        let timeout = Duration.seconds(2)
        let server = try await RawHTTPServer.start { line in
            // `GET /fuzz/12?… HTTP/1.1`: input 12; anything else (a redirect's next hop) a plain answer.
            let path = line.split(separator: " ").dropFirst().first ?? ""
            guard path.hasPrefix("/fuzz/"), let index = Int(path.dropFirst(6).prefix { $0.isNumber }) else {
                return .init("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            }
            let answer = HostileAnswers.make(seed: Self.seed, index: index)
            #if !canImport(Darwin)
            // A platform trap, not Runway's to catch (`trapsURLSessionOnLinux`; its own test in
            // `URLSessionPlatformTrapTests`): over URLSession that answer is a plain one.
            if kind == .urlSession, answer.trapsURLSessionOnLinux {
                return .init("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            }
            #endif
            return .init(answer.wire, holdOpen: answer.holdOpen)
        }
        let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let transport: any Transport = nio ?? URLSessionTransport()
        var tally = Tally()
        let before = Self.residentMegabytes
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            let engine = try Self.engine(over: transport, baseURL: server.baseURL)
            await Self.load(0..<inputs, concurrency: 32, on: engine, timeout: timeout, into: &tally)
        }
        let grown = Self.residentMegabytes - before
        print("hostile answers over \(kind) (seed \(Self.seed)): \(tally); resident +\(grown) MB")
        #expect(tally.loads == inputs)
        if Self.longRun != nil {
            #expect(grown < 256, "memory stays bounded: +\(grown) MB over \(inputs) loads")
        }
    }
}
