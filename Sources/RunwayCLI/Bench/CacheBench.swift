import Foundation
import Logging
@_spi(Benchmarks) import Runway
import RunwayStorage

/// The cache tiers against the plain alternatives: `NSCache` for memory, one file per entry for
/// disk, and inline blobs against files at several sizes (where the inline threshold belongs).
enum CacheBench {
    static func run(entries: Int) throws {
        try memory(entries: entries)
        try disk()
        try threshold()
    }

    static func opsPerSecond(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func entry(_ key: String, bytes: Int) -> CachedEntry {
        CachedEntry(
            key: key, status: 200, headers: [:], body: Data(repeating: 7, count: bytes), json: nil, storedAt: Date(),
            expiresAt: Date().addingTimeInterval(3600), apiName: "Bench", sensitiveComponent: nil)
    }

    final class Box { let entry: CachedEntry; init(_ entry: CachedEntry) { self.entry = entry } }

    static func memory(entries: Int) throws {
        let keys = (0..<entries).map { String(format: "%064x", $0 &* 2_654_435_761) }
        let values = keys.map { entry($0, bytes: 512) }
        let runway = MemoryCache(countLimit: entries, costLimit: Int.max / 2)
        let nsCache = NSCache<NSString, Box>()
        nsCache.countLimit = entries
        let nsKeys = keys.map { $0 as NSString }
        let boxes = values.map(Box.init)
        var hits = 0
        let runwaySet = opsPerSecond(entries) { for value in values { runway.store(value) } }
        let runwayGet = opsPerSecond(entries) { for key in keys where runway.entry(key) != nil { hits += 1 } }
        let nsSet = opsPerSecond(entries) { for (key, box) in zip(nsKeys, boxes) { nsCache.setObject(box, forKey: key) } }
        let nsGet = opsPerSecond(entries) { for key in nsKeys where nsCache.object(forKey: key) != nil { hits += 1 } }
        print("Memory tier, \(entries) entries of 512 B (ops/s; hits \(hits) of \(2 * entries)):")
        print(String(format: "  Runway MemoryCache   set %10.0f   get %10.0f", runwaySet, runwayGet))
        print(String(format: "  Foundation NSCache   set %10.0f   get %10.0f", nsSet, nsGet))
        print(String(format: "  Runway / NSCache     set %9.1fx   get %9.1fx\n", runwaySet / nsSet, runwayGet / nsGet))
    }

    static func scratch() throws -> (URL, Container) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("runway-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return (url, Container(root: url))
    }

    static func disk() throws {
        print("Disk tier against one file per entry (ops/s):")
        for (bytes, count) in [(100, 2000), (100 * 1024, 300)] {
            let (url, container) = try scratch()
            defer { try? FileManager.default.removeItem(at: url) }
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            let disk = try DiskCache(
                container: container, limits: .init(sizeLimit: 1 << 40, trimRatio: 0.7, inlineThreshold: 20 << 10),
                logger: logger)
            let values = (0..<count).map { entry(String(format: "%064x", $0), bytes: bytes) }
            let now = Date()
            let diskWrite = opsPerSecond(count) { for value in values { disk.store(value, now: now) } }
            var read = 0
            let diskRead = opsPerSecond(count) {
                for value in values { read += disk.entry(value.key, now: now)?.bytes.count ?? 0 }
            }
            let folder = try container.url(for: "files/.keep", in: .caches).deletingLastPathComponent()
            let fileWrite = try opsPerSecond(count) {
                for value in values {
                    try value.bytes.write(to: folder.appendingPathComponent(value.key), options: .atomic)
                }
            }
            let fileRead = try opsPerSecond(count) {
                for value in values { read += try Data(contentsOf: folder.appendingPathComponent(value.key)).count }
            }
            let label = bytes >= 1024 ? "\(bytes / 1024) KB" : "\(bytes) B"
            print(String(format: "  %-7@ Runway DiskCache  write %8.0f  read %8.0f", label as NSString, diskWrite, diskRead))
            print(String(format: "  %-7@ file per entry    write %8.0f  read %8.0f", label as NSString, fileWrite, fileRead))
            // What a load's waiters wait for: the write itself before, queueing it now.
            let queued = (0..<count).map { entry(String(format: "q%063x", $0), bytes: bytes) }
            let caller = opsPerSecond(count) {
                for value in queued { disk.queue.async { disk.store(value, now: now) } }
            }
            disk.queue.sync {}
            print(String(format: "  %-7@ caller's wait     inline write %8.0f  queued write %10.0f", label as NSString, diskWrite, caller))
        }
        print("  (file per entry: Foundation's atomic write, no fsync — as the disk tier writes its blobs)\n")
    }

    static func threshold() throws {
        print("Where the inline threshold belongs: the same sizes stored inline in SQLite vs as files (write+read ops/s):")
        for bytes in [4 << 10, 16 << 10, 64 << 10, 96 << 10, 128 << 10, 256 << 10, 1 << 20] {
            var rates: [Double] = []
            for inlineThreshold in [Int.max, 0] {
                let (url, container) = try scratch()
                defer { try? FileManager.default.removeItem(at: url) }
                var logger = Logger(label: "bench")
                logger.logLevel = .error
                let disk = try DiskCache(
                    container: container, limits: .init(sizeLimit: 1 << 40, trimRatio: 0.7, inlineThreshold: inlineThreshold),
                    logger: logger)
                let values = (0..<max(20, min(300, (32 << 20) / bytes))).map { entry(String(format: "%064x", $0), bytes: bytes) }
                let now = Date()
                rates.append(opsPerSecond(2 * values.count) {
                    for value in values { disk.store(value, now: now) }
                    for value in values { _ = disk.entry(value.key, now: now) }
                })
            }
            print(String(format: "  %4d KB   inline %8.0f   file %8.0f   %@", bytes >> 10, rates[0], rates[1],
                         (rates[0] >= rates[1] ? "inline faster" : "file faster") as NSString))
        }
    }
}
