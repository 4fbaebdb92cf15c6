import Foundation
import NIOConcurrencyHelpers
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// Offline: loads fail at once instead of waiting for a timeout, and an API that allows it
    /// answers from an expired entry, marked stale, rather than with nothing.
    static let offline = DemoChapter("offline", "Offline: fail fast, stale if offline (seeds 001/003)") { context, log in
        let clock = NIOLockedValueBox(Date())
        let cache = try ResponseCache(now: { clock.withLockedValue { $0 } })
        let network = NetworkMonitor(path: .wired)
        let engine = try context.makeEngine(cache: cache, network: network)
        var api = AdHocAPI("NearbyAPI", path: "/faults/cacheable")
        api.cachePolicy = .memory(lifetime: .seconds(60), staleIfOffline: true)
        let key = JSON.string("offline-\(UUID().uuidString.prefix(8))")
        let fresh = try await engine.perform(api, params: ["key": key]).get()

        // An hour later, and the device has lost its network.
        clock.withLockedValue { $0 += 3600 }
        network.update(.unreachable)
        let sent = context.wire.count(api.name)
        let stale = try await engine.perform(api, params: ["key": key]).get()
        let started = ContinuousClock.now
        let uncached = await engine.perform(AdHocAPI("ProfileAPI", path: "/echo/profile"))
        let failedIn = (ContinuousClock.now - started).milliseconds
        let sentOffline = context.wire.count(api.name) - sent

        network.update(.wired)
        let back = try await engine.perform(api, params: ["key": key]).get()
        log.say("online → \(Self.origin(fresh)); an hour later, offline → \(Self.origin(stale)), age \(Int(Self.age(stale) / 1000)) s, "
            + "\(sentOffline) requests sent")
        log.say("an API with nothing cached, offline → \(DemoChapter.describe(uncached)) in \(readable(milliseconds: failedIn)), not after a timeout")
        log.say("back online → \(Self.origin(back))")
        log.figure("offlineOrigin", .string(Self.origin(stale)))
        log.figure("offlineRequests", .int(sentOffline))
        log.figure("failFastMilliseconds", .double((failedIn * 10).rounded() / 10))
        try log.require(Self.origin(stale) == "memory (stale)" && sentOffline == 0, "offline, the stale entry should have answered without a request")
        guard case .failure(.noNetwork(reason: .unreachable)) = uncached else {
            throw DemoChapterFailure(description: "offline, a load should fail with noNetwork(.unreachable)")
        }
        try log.require(Self.origin(back) == "network", "back online, the load should reach the network")
    }
}
