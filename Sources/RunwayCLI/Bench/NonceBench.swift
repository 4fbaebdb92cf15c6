import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Runway
import RunwayExamples
import RunwayNIO
import RunwayServer

/// `runway bench --suite nonce`: whether the verifier's default nonce store holds real traffic.
/// Three lines: the default `MemoryNonceStore` fed 2,000 signed requests a second on a simulated
/// clock for three windows (never full, its size and memory); signed requests per second that
/// `runway serve` verifies in its own process; and, given `--postgres`, nonce claims per second
/// on PostgreSQL.
enum NonceBench {
    static func run(postgres: String?, logger: Logger) async throws {
        try storeAtSteadyRate()
        try await signedRequests(logger: logger)
        if let postgres { try await postgresClaims(postgres, logger: logger) }
    }

    /// 2,000 nonces a second, each kept its whole window (300 s), for 900 simulated seconds.
    static func storeAtSteadyRate() throws {
        let rate = 2_000
        let window = 300.0
        let before = SoakBench.residentMegabytes()
        let store = MemoryNonceStore()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var refused = 0
        var peak = 0
        let clock = ContinuousClock()
        let began = clock.now
        for index in 0..<(rate * 900) {
            let now = start.addingTimeInterval(Double(index) / Double(rate))
            if store.record(UUID().uuidString, expiry: now.addingTimeInterval(window), now: now) != .fresh { refused += 1 }
            if index % rate == 0 { peak = max(peak, store.count) }
        }
        let elapsed = clock.now - began
        let perRecord = Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9
        print("Nonce store (default MemoryNonceStore, capacity \(store.capacity)), 2,000 nonces/s for 3 windows on a simulated clock")
        print(
            "  refused: \(refused); live at most \(peak); resident memory +\(SoakBench.residentMegabytes() - before) MB; "
                + String(format: "%.0f ns per record (UUID included)", perRecord / Double(rate * 900)))
    }

    /// Signed `GET /signed/echo/…` at 32 in flight for 10 s against a verifying `runway serve`.
    static func signedRequests(logger: Logger) async throws {
        let child = try ChildServer.start(demo: true, verifying: true)
        defer { child.stop() }
        let nio = AsyncHTTPClientTransport()
        let engine = Engine(transport: nio, logger: logger)
        try engine.register(
            Service(
                id: "signed",
                baseURLs: [.release: child.baseURL],
                credentials: .init(signer: HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret))))
        let api = SignedEchoAPI()
        _ = try await engine.perform(api, params: [:]).get()
        let (clientCPU, serverCPU) = (OplogBench.processCPUSeconds(), OplogBench.processCPUSeconds(child.process.processIdentifier))
        let done = NIOLockedValueBox((ok: 0, failed: 0))
        let clock = ContinuousClock()
        let end = clock.now + .seconds(10)
        let began = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    while clock.now < end {
                        let ok = (try? await engine.perform(api, params: [:]).get()) != nil
                        done.withLockedValue { ok ? ($0.ok += 1) : ($0.failed += 1) }
                    }
                }
            }
        }
        let seconds = Double((clock.now - began).components.seconds) + Double((clock.now - began).components.attoseconds) / 1e18
        let (ok, failed) = done.withLockedValue { ($0.ok, $0.failed) }
        let serverCPUPerRequest = (OplogBench.processCPUSeconds(child.process.processIdentifier) - serverCPU) / Double(max(ok, 1))
        let clientCPUPerRequest = (OplogBench.processCPUSeconds() - clientCPU) / Double(max(ok, 1))
        try await nio.shutdown()
        print("Signed requests verified by runway serve (own process, default store), 32 in flight for 10 s")
        print(
            String(
                format: "  %.0f requests/s, %d refused or failed; CPU per request: server %.0f µs, client %.0f µs",
                Double(ok) / seconds, failed, serverCPUPerRequest * 1e6, clientCPUPerRequest * 1e6))
    }

    /// 20,000 claims through `PostgresNonceStore`, 32 at a time.
    static func postgresClaims(_ url: String, logger: Logger) async throws {
        let database = try await PostgresCollectorDatabase.connect(try ServeCommand.postgresConfiguration(url), logger: logger)
        let store = PostgresNonceStore(database: database)
        let claims = 20_000
        let next = NIOLockedValueBox(0)
        let fresh = NIOLockedValueBox(0)
        let clock = ContinuousClock()
        let began = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    while true {
                        let index = next.withLockedValue { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < claims else { return }
                        let now = Date()
                        if (try? await store.record("bench-\(UUID().uuidString)", expiry: now + 300, now: now)) == .fresh {
                            fresh.withLockedValue { $0 += 1 }
                        }
                    }
                }
            }
        }
        let elapsed = clock.now - began
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        await database.close()
        print("PostgresNonceStore, \(claims) claims 32 at a time (expired rows swept every 1,000)")
        print(String(format: "  %.0f claims/s, %d fresh", Double(claims) / seconds, fresh.withLockedValue { $0 }))
    }

    /// `GET /signed/echo/bench`: the verifier, and an echo of what arrived.
    struct SignedEchoAPI: API {
        var service: ServiceID { "signed" }
        var path: String { "/signed/echo/bench" }
        var method: HTTPRequest.Method { .get }
        var responseFormat: ResponseFormat { .raw }
        var retryPolicy: RetryPolicy { .never }
    }
}
