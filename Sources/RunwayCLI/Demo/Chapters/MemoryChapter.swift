import Foundation
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// Under memory pressure the memory tier is emptied and the disk tier stays, so the next
    /// load costs a disk read, not a request (purge caches under memory pressure).
    static let memory = DemoChapter("memory", "Memory pressure purges the memory tier (seed 000)") { context, log in
        var api = AdHocAPI("GalleryAPI", path: "/faults/cacheable")
        api.cachePolicy = .memoryAndDisk()
        let keys = (0..<5).map { JSON.string("gallery-\($0)-\(UUID().uuidString.prefix(8))") }
        for key in keys { _ = try await context.engine.perform(api, params: ["key": key]).get() }
        await context.cache.waitForDiskWork()
        let before = context.cache.memoryUsage
        let monitor = MemoryPressureMonitor(logger: context.logger) { [cache = context.cache] in cache.purge() }
        defer { monitor.stop() }
        monitor.simulatePressure()
        let after = context.cache.memoryUsage
        let sent = context.wire.count(api.name)
        let reloaded = try await context.engine.perform(api, params: ["key": keys[0]]).get()
        log.say("pressure source armed on this system: \(monitor.isActive ? "yes" : "no (purge() remains)"); a pressure event, simulated:")
        log.say("memory tier \(before.count) entries (\(before.bytes) B) → \(after.count); disk tier \(context.cache.diskUsage) B kept")
        log.say("the next load → \(Self.origin(reloaded)), \(context.wire.count(api.name) - sent) requests sent")
        log.figure("memoryEntriesBefore", .int(before.count))
        log.figure("memoryEntriesAfter", .int(after.count))
        log.figure("reloadOrigin", .string(Self.origin(reloaded)))
        try log.require(before.count >= 5 && after.count == 0, "the memory tier was not emptied")
        try log.require(Self.origin(reloaded) == "disk" && context.wire.count(api.name) == sent, "after a purge the disk tier should answer")
    }
}
