import Foundation
import HTTPTypes
import Logging
import Runway
import RunwayStorage
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

/// The server's word on keeping an answer (RFC 9111, RFC 5861), over real HTTP to the demo
/// server's `/caching/doc/{key}`, whose `Cache-Control`, `ETag` and failures each test steers,
/// on both transports. The cache's clock is the test's, so freshness runs out without waiting.
@Suite("Response cache: the server's word (Cache-Control, validators, Vary, stale answers)", .timeLimit(.minutes(10)))
@MainActor
struct ServerCacheRulesTests {
    let root: CacheRoot
    /// A day behind the server's clock: its `Date` is then never behind the cache's, so an
    /// answer arrives with no apparent age, however far a test moves this clock (forward,
    /// less than a day).
    let clock = TestBox(Date().addingTimeInterval(-86_400))

    init() throws { root = try CacheRoot() }

    func makeCache(disk: Bool = false) throws -> ResponseCache {
        let clock = self.clock
        return try ResponseCache(container: disk ? root.container : nil, now: { clock.value })
    }

    func advance(_ seconds: TimeInterval) { clock.set(clock.value.addingTimeInterval(seconds)) }

    /// The document `key` with the server's `Cache-Control` and `Vary` given as params (the
    /// route echoes them as fields).
    struct Document {
        var api: AdHocAPI
        var params: Parameters

        func load(_ engine: Engine) async -> Result<RawResponse, RunwayError> { await engine.perform(api, params: params) }
    }

    func document(_ key: String, control: String? = nil, vary: String? = nil, policy: CachePolicy) -> Document {
        var params: Parameters = [:]
        if let control { params["cc"] = .string(control) }
        if let vary { params["vary"] = .string(vary) }
        var api = AdHocAPI(path: "/caching/doc/\(key)")
        api.cachePolicy = policy
        return Document(api: api, params: params)
    }

    /// Makes the next GETs of `key` fail with `status` (0: succeed again), or changes its version.
    func steer(_ harness: Harness, _ key: String, _ action: String, status: Int? = nil) async throws {
        var api = AdHocAPI(path: "/caching/doc/\(key)/\(action)", method: .post)
        api.name = "Steer"
        api.paramEncoding = .query
        _ = try await harness.engine.perform(api, params: status.map { ["status": .int($0)] } ?? [:]).get()
    }

    func version(_ response: RawResponse) -> Int? { response.json?["data"]?["version"]?.intValue }

    @Test("no-store is never kept, in memory or on disk, whatever the API's policy", arguments: TransportKind.allCases)
    func noStore(kind: TransportKind) async throws {
        let cache = try makeCache(disk: true)
        try await withHarness(kind, cache: cache) { harness in
            let api = document("no-store", control: "no-store", policy: .memoryAndDisk())
            for _ in 0..<2 {
                let response = try await api.load(harness.engine).get()
                #expect(response.origin == .network)
            }
            await cache.waitForDiskWork()
            #expect(cache.memoryUsage.count == 0)
            #expect(cache.diskUsage == 0)
            #expect(harness.probe.count("/caching/doc/no-store") == 2)
        }
    }

    @Test("max-age caps the API's lifetime; a stale entry with an ETag is revalidated, and a 304 delivers the stored body", arguments: TransportKind.allCases)
    func maxAgeAndRevalidation(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let api = document("max-age", control: "max-age=60", policy: .memory(lifetime: .seconds(180)))
            let first = try await api.load(harness.engine).get()
            advance(30)
            #expect(try await api.load(harness.engine).get().origin.isCached)
            advance(40)  // 70 s: past the server's 60, within the API's 180
            let revalidated = try await api.load(harness.engine).get()
            #expect(revalidated.origin == .revalidated(tier: .memory))
            #expect(revalidated.status.code == 200)
            #expect(revalidated.body == first.body)
            #expect(harness.probe.count("/caching/doc/max-age") == 2)
            #expect(harness.probe.count("/caching/doc/max-age conditional") == 1)
            #expect(harness.probe.count("/caching/doc/max-age 304") == 1)
            // The 304 made it fresh again for the server's 60 s.
            advance(30)
            #expect(try await api.load(harness.engine).get().origin.isCached)
            #expect(harness.probe.count("/caching/doc/max-age") == 2)
            // Changed on the server: the validator no longer matches, and the new body is kept.
            try await steer(harness, "max-age", "change")
            advance(61)
            let changed = try await api.load(harness.engine).get()
            #expect(changed.origin == .network)
            #expect(version(changed) == 2)
            #expect(harness.probe.count("/caching/doc/max-age 304") == 1)
        }
    }

    @Test("no-cache: kept, but asked about on every use", arguments: TransportKind.allCases)
    func noCache(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let api = document("no-cache", control: "no-cache", policy: .memory())
            _ = try await api.load(harness.engine).get()
            #expect(try await api.load(harness.engine).get().origin == .revalidated(tier: .memory))
            #expect(try await api.load(harness.engine).get().origin == .revalidated(tier: .memory))
            #expect(harness.probe.count("/caching/doc/no-cache 304") == 2)
        }
    }

    @Test("a 5xx: a stale entry stands in with the API's staleIfError or within the server's stale-if-error; never with must-revalidate", arguments: TransportKind.allCases)
    func staleIfError(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let byPolicy = document("sie-policy", control: "max-age=10", policy: CachePolicy.memory().staleIfError())
            let byServer = document("sie-server", control: "max-age=10, stale-if-error=60", policy: .memory())
            let forbidden = document("sie-must", control: "max-age=10, must-revalidate", policy: CachePolicy.memory().staleIfError())
            let plain = document("sie-plain", control: "max-age=10", policy: .memory())
            for api in [byPolicy, byServer, forbidden, plain] { _ = try await api.load(harness.engine).get() }
            for key in ["sie-policy", "sie-server", "sie-must", "sie-plain"] { try await steer(harness, key, "fail", status: 503) }
            advance(20)
            let policyAnswer = try await byPolicy.load(harness.engine).get()
            #expect(policyAnswer.origin.isStale)
            #expect(version(policyAnswer) == 1)
            #expect(try await byServer.load(harness.engine).get().origin.isStale)
            #expect(await forbidden.load(harness.engine).failure == .httpStatus(code: 503, body: Data()))
            #expect(await plain.load(harness.engine).failure == .httpStatus(code: 503, body: Data()))
            advance(60)  // 70 s stale: past the server's window; the API's own has none
            #expect(await byServer.load(harness.engine).failure == .httpStatus(code: 503, body: Data()))
            #expect(try await byPolicy.load(harness.engine).get().origin.isStale)
        }
    }

    @Test("a connection broken mid-answer: the API's staleIfError stands in; without it, the failure", arguments: TransportKind.allCases)
    func staleIfErrorOnBrokenConnection(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let onError = document("broken-error", control: "max-age=10", policy: CachePolicy.memory().staleIfError())
            let plain = document("broken-plain", control: "max-age=10", policy: .memory())
            for document in [onError, plain] { _ = try await document.load(harness.engine).get() }
            for key in ["broken-error", "broken-plain"] { try await steer(harness, key, "fail", status: 1) }
            advance(20)
            let stale = try await onError.load(harness.engine).get()
            #expect(stale.origin.isStale)
            #expect(version(stale) == 1)
            let failure = await plain.load(harness.engine).failure
            #expect(failure.map(Revalidation.isServerFailure) == true, "\(String(describing: failure))")
        }
    }

    @Test("stale-while-revalidate: the stale entry answers at once and is refreshed behind it", arguments: TransportKind.allCases)
    func staleWhileRevalidate(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let api = document("swr", control: "max-age=10, stale-while-revalidate=60", policy: .memory())
            let firstLoad = LoadID.next()
            _ = try await harness.engine.perform(api.api, params: api.params, loadID: firstLoad).get()
            try await steer(harness, "swr", "change")
            advance(20)
            let stale = try await api.load(harness.engine).get()
            #expect(stale.origin.isStale)
            #expect(version(stale) == 1)
            // The refresh's own load line, written after it stored its answer.
            _ = await harness.log.waitForLine { line in
                line.message.contains(" GET ") && line.message.contains("/caching/doc/swr")
                    && line.metadata["runway.outcome"] == "success"
                    && line.metadata["runway.load"] != "\(firstLoad)"
            }
            let fresh = try await api.load(harness.engine).get()
            #expect(fresh.origin.isCached && !fresh.origin.isStale)
            #expect(version(fresh) == 2)
            #expect(harness.probe.count("/caching/doc/swr") == 2)
        }
    }

    @Test("Vary: the response's fields join the key; Vary: * is never reused", arguments: TransportKind.allCases)
    func vary(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            var api = document("vary", control: "max-age=60", vary: "X-Variant", policy: .memory())
            api.api.headers[HTTPField.Name("X-Variant")!] = "a"
            _ = try await api.load(harness.engine).get()
            #expect(try await api.load(harness.engine).get().origin.isCached)
            api.api.headers[HTTPField.Name("X-Variant")!] = "b"
            #expect(try await api.load(harness.engine).get().origin == .network)
            #expect(try await api.load(harness.engine).get().origin.isCached)
            #expect(harness.probe.count("/caching/doc/vary") == 2)
            let star = document("vary-star", control: "max-age=60", vary: "*", policy: .memory())
            for _ in 0..<2 {
                let response = try await star.load(harness.engine).get()
                #expect(response.origin == .network)
            }
        }
    }

    @Test("the disk tier keeps validators across a relaunch: the new process revalidates instead of fetching", arguments: TransportKind.allCases)
    func diskRevalidationAfterRelaunch(kind: TransportKind) async throws {
        let api = document("relaunch", control: "max-age=10", policy: .memoryAndDisk())
        let before = try makeCache(disk: true)
        try await withHarness(kind, cache: before) { harness in
            _ = try await api.load(harness.engine).get()
            await before.waitForDiskWork()
            // A new cache over the same files: what the next launch opens.
            let after = try makeCache(disk: true)
            let engine = Engine(transport: URLSessionTransport(), cache: after)
            try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL]))
            advance(20)
            let revalidated = try await api.load(engine).get()
            #expect(revalidated.origin == .revalidated(tier: .disk))
            #expect(version(revalidated) == 1)
            #expect(harness.probe.count("/caching/doc/relaunch 304") == 1)
        }
    }

    @Test("cache then network: the stored answer, marked stale, then the network's — to the delegate and to updates(with:)", arguments: TransportKind.allCases)
    func cacheThenNetwork(kind: TransportKind) async throws {
        let cache = try makeCache()
        try await withHarness(kind, cache: cache) { harness in
            let api = document("ctn", control: "max-age=10", policy: CachePolicy.memory().cacheThenNetwork())
            let manager = APIManager(api.api, engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            _ = try await manager.load(with: api.params)
            try await steer(harness, "ctn", "change")
            advance(20)
            manager.loadData(with: api.params)
            await delegate.waitForEvents(2)
            guard case .success(let early?) = delegate.events[0], case .success(let late?) = delegate.events[1] else {
                Issue.record("two successes expected: \(delegate.events)")
                return
            }
            #expect(early.origin.isStale && version(early) == 1)
            #expect(late.origin == .network && version(late) == 2)
            #expect(manager.rawResponse.map(version) == 2)
            // The same order through the async sequence.
            try await steer(harness, "ctn", "change")
            advance(20)
            var seen: [(stale: Bool, version: Int?)] = []
            for await update in manager.updates(with: api.params) {
                let response = try update.get()
                seen.append((response.origin.isStale, version(response)))
            }
            #expect(seen.map(\.stale) == [true, false])
            #expect(seen.map(\.version) == [2, 3])
        }
    }

    @Test("identical GETs in flight share one request even when nothing is cached; POSTs, and an API that opts out, send each", arguments: TransportKind.allCases)
    func coalescingWithoutCache(kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let watch = JoinWatch()
            watch.install(on: harness.engine)
            let api = AdHocAPI(path: "/faults/gate/uncached")
            let loads = (0..<10).map { _ in Task { await harness.engine.perform(api, params: ["q": 1]) } }
            await watch.wait(for: 10)
            harness.probe.openGate("uncached")
            for load in loads { #expect(try await load.value.get().status.code == 200) }
            #expect(harness.probe.count("/faults/gate/uncached") == 1)
            // Turned off, every load is its own request: three wait at the gate at once.
            var own = AdHocAPI(path: "/faults/gate/own")
            own.sharesIdenticalLoads = false
            let waitingBefore = harness.probe.count(of: .gateWaiting)
            let separate = (0..<3).map { _ in Task { await harness.engine.perform(own) } }
            await harness.probe.wait(for: .gateWaiting, count: waitingBefore + 3)
            harness.probe.openGate("own")
            for load in separate { _ = try await load.value.get() }
            #expect(harness.probe.count("/faults/gate/own") == 3)
            // Not idempotent: never shared.
            let post = AdHocAPI(path: "/faults/gate/posted", method: .post)
            let posts = (0..<3).map { _ in Task { await harness.engine.perform(post) } }
            await harness.probe.wait(for: .gateWaiting, count: waitingBefore + 6)
            harness.probe.openGate("posted")
            for load in posts { _ = try await load.value.get() }
            #expect(harness.probe.count("POST /faults/gate/posted") == 3)
        }
    }
}

extension Result where Failure == RunwayError {
    /// The error of a failure; `nil` for a success.
    var failure: RunwayError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
