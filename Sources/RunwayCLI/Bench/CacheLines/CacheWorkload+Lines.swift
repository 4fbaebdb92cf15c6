import Foundation
@_spi(Benchmarks) import Runway

// Compiled twice: here for `runway bench --suite cache`, and in the benchmark package through
// the link Benchmarks/Benchmarks/RunwayBenchmarks/CacheLines, so both measure the same lines.

extension CacheWorkload {
    /// Every line, in the order both harnesses run them; the cold lines only where the page
    /// cache can be dropped (``PageCache/canDrop``).
    static func lines() -> [CacheLine] {
        memoryLines() + [100, 100 << 10].flatMap(diskLines)
    }

    static func memoryLines() -> [CacheLine] {
        let values = keys.map { entry($0, bytes: 512) }
        func line(_ name: String, _ prepare: @escaping @Sendable () throws -> () throws -> Void) -> CacheLine {
            CacheLine(name: "memory \(name)", isDisk: false, prepare: prepare)
        }
        var lines = [
            line("set 512 B: Runway MemoryCache") {
                let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
                return { for value in values { cache.store(value) } }
            },
            line("set 512 B: plain LRU behind a Mutex") {
                let cache = PlainLRU(limit: count)
                return { for value in values { cache.set(value, for: value.key) } }
            },
            line("set 512 B: NSCache") {
                let cache = NSCache<NSString, Box>()
                cache.countLimit = count
                let pairs = values.map { ($0.key as NSString, Box($0)) }
                return { for (key, box) in pairs { cache.setObject(box, forKey: key) } }
            },
        ]
        // Get: every key, present (hit) or never stored (miss); a hit line that misses throws.
        for (kind, lookups) in [("hit", keys), ("miss", absentKeys)] {
            let expected = kind == "hit" ? count : 0
            lines += [
                line("get \(kind) 512 B: Runway MemoryCache") {
                    let cache = MemoryCache(countLimit: count, costLimit: Int.max / 2)
                    for value in values { cache.store(value) }
                    return { try expect(expected, lookups.count { cache.entry($0) != nil }) }
                },
                line("get \(kind) 512 B: plain LRU behind a Mutex") {
                    let cache = PlainLRU(limit: count)
                    for value in values { cache.set(value, for: value.key) }
                    return { try expect(expected, lookups.count { cache.value(for: $0) != nil }) }
                },
                line("get \(kind) 512 B: NSCache") {
                    let cache = NSCache<NSString, Box>()
                    cache.countLimit = count
                    for value in values { cache.setObject(Box(value), forKey: value.key as NSString) }
                    let nsKeys = lookups.map { $0 as NSString }
                    return { try expect(expected, nsKeys.count { cache.object(forKey: $0) != nil }) }
                },
            ]
        }
        // Mixed: look up, and on a miss store (evicting), in a skewed order over twice the keys
        // the tier holds.
        lines += [
            line("mixed 512 B, half the keys fit: Runway MemoryCache") {
                let cache = MemoryCache(countLimit: mixedLimit, costLimit: Int.max / 2)
                return { for index in mixedSequence where cache.entry(keys[index]) == nil { cache.store(values[index]) } }
            },
            line("mixed 512 B, half the keys fit: plain LRU behind a Mutex") {
                let cache = PlainLRU(limit: mixedLimit)
                return {
                    for index in mixedSequence where cache.value(for: keys[index]) == nil { cache.set(values[index], for: keys[index]) }
                }
            },
            line("mixed 512 B, half the keys fit: NSCache") {
                let cache = NSCache<NSString, Box>()
                cache.countLimit = mixedLimit
                let nsKeys = keys.map { $0 as NSString }
                let boxes = values.map(Box.init)
                return {
                    for index in mixedSequence where cache.object(forKey: nsKeys[index]) == nil {
                        cache.setObject(boxes[index], forKey: nsKeys[index])
                    }
                }
            },
        ]
        return lines
    }

    /// Writes, warm reads, misses and cold reads of `bytes`-sized bodies: Runway's `DiskCache`
    /// with the default limits against a file per entry.
    static func diskLines(bytes: Int) -> [CacheLine] {
        let size = bytes >= 1024 ? "\(bytes >> 10) KB" : "\(bytes) B"
        let values = keys.map { entry($0, bytes: bytes) }
        let now = Date()
        func line(_ name: String, _ prepare: @escaping @Sendable () throws -> () throws -> Void) -> CacheLine {
            CacheLine(name: "disk \(name)", isDisk: true, prepare: prepare)
        }
        var lines = [
            line("write \(size): Runway DiskCache") {
                let scratch = try Scratch()
                let disk = try scratch.diskCache()
                return { withExtendedLifetime(scratch) { for value in values { disk.store(value, now: now) } } }
            },
            // What a load waits for now: the write queued on the tier's queue, not the write.
            line("write \(size), queued (the caller's wait): Runway DiskCache") {
                let sample = try QueuedWrites(scratch: Scratch())
                return {
                    withExtendedLifetime(sample) {
                        let disk = sample.disk
                        for value in values { disk.queue.async { disk.store(value, now: now) } }
                    }
                }
            },
            line("write \(size): a file per entry") {
                let scratch = try Scratch()
                let files = keys.map(scratch.file)
                return { try withExtendedLifetime(scratch) { for (value, file) in zip(values, files) { try value.bytes.write(to: file, options: .atomic) } } }
            },
            line("write \(size): a file per entry, no fsync") {
                let scratch = try Scratch()
                let files = keys.map(scratch.file)
                return { try withExtendedLifetime(scratch) { for (value, file) in zip(values, files) { try writeUnsynced(value.bytes, to: file) } } }
            },
        ]
        for (kind, lookups) in [("read", keys), ("read miss", absentKeys)] {
            let expected = kind == "read" ? count * bytes : 0
            lines += [
                line("\(kind) \(size): Runway DiskCache") {
                    let scratch = try Scratch()
                    let disk = try scratch.diskCache()
                    for value in values { disk.store(value, now: now) }
                    return {
                        try withExtendedLifetime(scratch) {
                            try expect(expected, bytesRead(lookups, from: disk, now: now))
                        }
                    }
                },
                line("\(kind) \(size): a file per entry") {
                    let scratch = try Scratch()
                    for value in values { try writeUnsynced(value.bytes, to: scratch.file(value.key)) }
                    let files = lookups.map(scratch.file)
                    return {
                        try withExtendedLifetime(scratch) {
                            try expect(expected, bytesRead(files))
                        }
                    }
                },
            ]
        }
        // Cold: written, flushed, the kernel's page cache dropped and the database opened anew,
        // as after a reboot or after the system reclaimed a backgrounded app's file pages.
        guard PageCache.canDrop else { return lines }
        let expected = count * bytes
        lines += [
            line("read cold \(size): Runway DiskCache") {
                let scratch = try Scratch()
                do {
                    let disk = try scratch.diskCache()
                    for value in values { disk.store(value, now: now) }
                }
                try PageCache.drop()
                let disk = try scratch.diskCache()
                return {
                    try withExtendedLifetime(scratch) {
                        try expect(expected, bytesRead(keys, from: disk, now: now))
                    }
                }
            },
            line("read cold \(size): a file per entry") {
                let scratch = try Scratch()
                for value in values { try writeUnsynced(value.bytes, to: scratch.file(value.key)) }
                let files = keys.map(scratch.file)
                try PageCache.drop()
                return {
                    try withExtendedLifetime(scratch) {
                        try expect(expected, bytesRead(files))
                    }
                }
            },
        ]
        return lines
    }

    /// The bytes of every body found for `keys` in `disk`.
    static func bytesRead(_ keys: [String], from disk: DiskCache, now: Date) -> Int {
        keys.reduce(0) { $0 + (disk.entry($1, now: now)?.bytes.count ?? 0) }
    }

    /// The bytes of every file, a missing one read as none.
    static func bytesRead(_ files: [URL]) -> Int {
        files.reduce(0) { $0 + ((try? Data(contentsOf: $1))?.count ?? 0) }
    }

    /// A line that found or read other than it should is not measuring what it says.
    static func expect(_ expected: Int, _ found: Int) throws {
        guard found == expected else { throw CacheLineError.unexpected(expected: expected, found: found) }
    }
}

enum CacheLineError: Error {
    case unexpected(expected: Int, found: Int)
}
