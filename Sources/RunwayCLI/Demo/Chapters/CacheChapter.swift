import Foundation
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// Two tiers: memory, then disk (which a new launch still has); the server's `no-cache` and
    /// `ETag` make a reload a 304; and a hundred screens asking for the same thing at once make
    /// one request.
    static let cache = DemoChapter("cache", "Caching (seed 003: 緩存)") { context, log in
        var api = AdHocAPI("CachedListAPI", path: "/faults/cacheable")
        api.cachePolicy = .memoryAndDisk(memoryLifetime: .seconds(60), diskLifetime: .seconds(3600))
        let key = JSON.string("demo-\(UUID().uuidString.prefix(8))")
        let sentBefore = context.wire.count(api.name)

        let first = try await context.engine.perform(api, params: ["key": key]).get()
        let second = try await context.engine.perform(api, params: ["key": key]).get()
        await context.cache.waitForDiskWork()
        // A new launch: a new cache over the same container, a new engine.
        let relaunchedCache = try ResponseCache(container: context.container)
        let relaunched = try context.makeEngine(cache: relaunchedCache)
        let third = try await relaunched.perform(api, params: ["key": key]).get()
        log.say("load 1 → \(Self.origin(first)); load 2 → \(Self.origin(second)); after a relaunch (new engine, same container) → \(Self.origin(third))")

        // The server's word: `no-cache` and an ETag. The second load asks, and a 304 answers
        // without the body.
        var list = AdHocAPI("RevalidatedListAPI", path: "/caching/doc/demo-\(UUID().uuidString.prefix(8))")
        list.cachePolicy = .followingServer(tiers: .memory)
        let listParams: Parameters = ["cc": "no-cache", "size": 50_000]
        let whole = try await context.engine.perform(list, params: listParams).get()
        let confirmed = try await context.engine.perform(list, params: listParams).get()
        log.say(
            "Cache-Control: no-cache with an ETag → load 1 → \(Self.origin(whole)) (\(whole.body.count / 1000) KB); "
                + "load 2 → \(confirmed.status.code) from \(Self.origin(confirmed)), the server sent a 304 and no body")
        log.figure("revalidatedOrigin", .string(Self.origin(confirmed)))
        try log.require(Self.origin(confirmed) == "memory (revalidated)", "the second load should have been revalidated")

        let burstKey = JSON.string("burst-\(UUID().uuidString.prefix(8))")
        let beforeBurst = context.wire.count(api.name)
        let results = await Self.burst(100, of: api, key: burstKey, on: context.engine)
        let burstSent = context.wire.count(api.name) - beforeBurst
        log.say("100 identical loads at once → \(results) answers from \(burstSent) request on the wire (the rest joined it)")
        log.figure("origins", .array([first, second, third].map { .string(Self.origin($0)) }))
        log.figure("requestsForThreeLoads", .int(beforeBurst - sentBefore))
        log.figure("burstLoads", .int(results))
        log.figure("burstRequests", .int(burstSent))
        try log.require(
            [first, second, third].map { Self.origin($0) } == ["network", "memory", "disk"],
            "expected network, memory, disk")
        try log.require(beforeBurst - sentBefore == 1, "three loads of one key sent \(beforeBurst - sentBefore) requests")
        try log.require(results == 100 && burstSent == 1, "100 identical loads made \(burstSent) requests")
    }

    /// Runs `count` identical loads at once; how many succeeded.
    nonisolated static func burst(_ count: Int, of api: AdHocAPI, key: JSON, on engine: Engine) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask { (try? await engine.perform(api, params: ["key": key]).get()) != nil }
            }
            var succeeded = 0
            for await success in group where success { succeeded += 1 }
            return succeeded
        }
    }
}
