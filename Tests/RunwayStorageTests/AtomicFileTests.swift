import Foundation
import Testing
@testable import RunwayStorage

#if canImport(Glibc)
import Glibc
#endif

/// The names in `directory`, without the backup-exclusion markers.
func entries(_ directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !BackupExclusion.isMarker($0) }.sorted()
}

@Suite("Atomic writes and capacity", .timeLimit(.minutes(10)))
struct AtomicFileTests {
    @Test("a write replaces the whole file and leaves no temporary file behind")
    func replaces() throws {
        let root = try TemporaryRoot()
        let url = try root.container.url(for: "state.json", in: .applicationSupport)
        try AtomicFile.write(Data("old".utf8), to: url)
        try AtomicFile.write(Data("new content".utf8), to: url)
        #expect(try Data(contentsOf: url) == Data("new content".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["state.json"])
        #expect(FileSystem.permissions(of: url) == 0o600)
    }

    @Test("an insufficient-space refusal comes before any byte is written (injected capacity)")
    func refusedByCapacitySource() throws {
        let root = try TemporaryRoot()
        let url = try root.container.url(for: "big.bin", in: .caches)
        try AtomicFile.write(Data("keep".utf8), to: url)
        #expect(throws: StorageError.insufficientSpace(needed: 1000, available: 999)) {
            try AtomicFile.write(Data(count: 1000), to: url, capacity: FixedCapacity(bytes: 999))
        }
        #expect(try Data(contentsOf: url) == Data("keep".utf8), "the old file is untouched")
        #expect(try entries(url.deletingLastPathComponent()) == ["big.bin"])
    }

    #if os(Linux)
    /// Mounts a 1 MiB tmpfs for the test when running as root (CI is), else returns nil.
    func smallVolume() throws -> (URL, () -> Void)? {
        guard getuid() == 0 else { return nil }
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("runway-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard (try? run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path])) != nil else {
            try? FileManager.default.removeItem(at: mountPoint)
            return nil
        }
        return (mountPoint, {
            _ = try? run("/bin/umount", [mountPoint.path])
            try? FileManager.default.removeItem(at: mountPoint)
        })
    }

    @Test("on a real 1 MiB volume: the system capacity refuses a 2 MiB write, and a full disk leaves no half file")
    func realSmallVolume() throws {
        guard let (volume, unmount) = try smallVolume() else {
            // Not root, or mounting is not allowed here: the injected-capacity test above covers the refusal.
            return
        }
        defer { unmount() }
        let container = Container(root: volume)
        let url = try container.url(for: "video.bin", in: .caches)
        let available = try SystemCapacity().availableCapacity(at: url, for: .important)
        #expect(available <= 1 << 20)
        #expect(try SystemCapacity().availableCapacity(at: url, for: .opportunistic) <= available)
        #expect {
            try AtomicFile.write(Data(count: 2 << 20), to: url)
        } throws: { error in
            guard case .insufficientSpace(let needed, _) = error as? StorageError else { return false }
            return needed == 2 << 20
        }
        #expect(!FileSystem.exists(url))
        // Without the check the kernel itself runs out of space mid-write: still a typed error, no debris.
        #expect {
            try AtomicFile.write(Data(count: 2 << 20), to: url, capacity: nil)
        } throws: { error in
            guard case .insufficientSpace = error as? StorageError else { return false }
            return true
        }
        #expect(try entries(url.deletingLastPathComponent()).isEmpty)
    }
    #endif

    @Test("the opportunistic reserve is 5 % of the volume, at most 1 GiB")
    func reserve() {
        #expect(SystemCapacity.opportunisticReserve(volumeSize: 100 << 20) == 5 << 20)
        #expect(SystemCapacity.opportunisticReserve(volumeSize: 1 << 40) == 1 << 30)
    }

    @Test("a file system's block counts past any disk (\"unlimited\": all bits set) give Int64.max bytes, never a trap")
    func absurdBlockCounts() {
        #expect(SystemCapacity.bytes(UInt64(1_000), of: UInt64(4_096)) == 4_096_000)
        #expect(SystemCapacity.bytes(UInt64.max, of: UInt64(4_096)) == .max, "a count past Int64")
        #expect(SystemCapacity.bytes(UInt64(1) << 62, of: UInt64(4_096)) == .max, "a product past Int64")
        #expect(SystemCapacity.bytes(UInt64(7), of: UInt64.max) == .max, "a block size past Int64")
        #expect(SystemCapacity.bytes(UInt64(0), of: UInt64.max) == 0)
        #expect(SystemCapacity.bytes(-5, of: 4_096) == 0)
    }
}

@Suite("Coalescing writer", .timeLimit(.minutes(10)))
struct CoalescingWriterTests {
    /// A sleep the test releases by hand.
    final class ManualSleep: Sendable {
        let (released, release) = AsyncStream<Void>.makeStream()
        var sleep: @Sendable (Duration) async throws -> Void {
            { [released] _ in for await _ in released { return } }
        }
    }

    @Test("a burst of changes is written once, with the latest content, when the interval ends")
    func coalesces() async throws {
        let root = try TemporaryRoot()
        let url = try root.container.url(for: "draft.txt", in: .applicationSupport)
        let clock = ManualSleep()
        let writer = CoalescingWriter(url: url, interval: .seconds(2), sleep: clock.sleep)
        for index in 1...100 { await writer.update(Data("draft \(index)".utf8)) }
        #expect(await writer.writeCount == 0, "nothing is written before the interval ends")
        #expect(!FileSystem.exists(url))
        clock.release.yield()
        try await writer.flush()  // waits for nothing new: the scheduled write ran or runs now
        #expect(await writer.writeCount == 1)
        #expect(try Data(contentsOf: url) == Data("draft 100".utf8))
    }

    @Test("flush writes what is pending; close flushes and refuses later updates")
    func flushAndClose() async throws {
        let root = try TemporaryRoot()
        let url = try root.container.url(for: "draft.txt", in: .applicationSupport)
        let writer = CoalescingWriter(url: url, interval: .seconds(3600))
        await writer.update(Data("a".utf8))
        try await writer.flush()
        try await writer.flush()
        #expect(await writer.writeCount == 1, "a flush with nothing pending writes nothing")
        await writer.update(Data("b".utf8))
        try await writer.close()
        #expect(await writer.writeCount == 2)
        #expect(try Data(contentsOf: url) == Data("b".utf8))
        #expect(await writer.update(Data("c".utf8)) == false)
    }

    /// Sleeps the test releases one by one, in the order they began; they return normally even
    /// when cancelled, as a sleep that swallows cancellation would.
    final class GatedSleeps: Sendable {
        private let gates = Locked<[CheckedContinuation<Void, Never>?]>([])
        let (began, beganSink) = AsyncStream<Int>.makeStream()

        var sleep: @Sendable (Duration) async throws -> Void {
            { [self] _ in
                await withCheckedContinuation { continuation in
                    let index = gates.withLock { gates in
                        gates.append(continuation)
                        return gates.count - 1
                    }
                    beganSink.yield(index)
                }
            }
        }

        func release(_ index: Int) {
            let gate = gates.withLock { gates -> CheckedContinuation<Void, Never>? in
                defer { gates[index] = nil }
                return gates[index]
            }
            gate?.resume()
        }
    }

    @Test("after a flush, the sleeper it cancelled never writes: the next write waits a full interval")
    func flushCancelsTheScheduledWrite() async throws {
        let root = try TemporaryRoot()
        let url = try root.container.url(for: "draft.txt", in: .applicationSupport)
        let sleeps = GatedSleeps()
        var began = sleeps.began.makeAsyncIterator()
        let writer = CoalescingWriter(url: url, interval: .seconds(2), sleep: sleeps.sleep)
        await writer.update(Data("a".utf8))
        #expect(await began.next() == 0)
        try await writer.flush()
        #expect(await writer.writeCount == 1)
        await writer.update(Data("b".utf8))
        #expect(await began.next() == 1)
        // The first sleeper wakes after all (its cancellation ignored): it must not write "b".
        sleeps.release(0)
        for _ in 0..<100 {
            await Task.yield()
            #expect(await writer.writeCount == 1, "the cancelled sleeper wrote out of turn")
        }
        sleeps.release(1)
        try await writer.close()
        #expect(await writer.writeCount == 2)
        #expect(try Data(contentsOf: url) == Data("b".utf8))
    }
}

/// A value behind a lock, for test doubles shared across tasks.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
