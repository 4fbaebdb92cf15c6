import Foundation
import Logging
import RunwayTestSupport
import Testing
@_spi(Benchmarks) @testable import Runway

@Suite("Memory pressure purges the memory tier", .timeLimit(.minutes(10)))
struct MemoryPressureTests {
    @Test("where no PSI file can be armed, one log line says the notifications are unavailable")
    func unavailable() {
        let log = LogCapture()
        let monitor = MemoryPressureMonitor(
            pressureFiles: ["/nonexistent/pressure/memory"], logger: Logger(label: "t") { _ in log }, handler: {})
        #if os(Linux)
        #expect(!monitor.isActive)
        #expect(log.lines.filter { $0.message.contains("unavailable") }.count == 1)
        #endif
        monitor.stop()
    }

    #if os(Linux)
    @Test("on the real PSI files the monitor is either armed or says once that it is not, never both")
    func armedOrReported() throws {
        let log = LogCapture()
        let monitor = MemoryPressureMonitor(logger: Logger(label: "t") { _ in log }, handler: {})
        let reported = log.lines.filter { $0.message.contains("unavailable") }.count
        #expect(monitor.isActive ? reported == 0 : reported == 1)
        monitor.stop()
    }

    @Test(
        "where the kernel has writable PSI files (this project's machines), the monitor is armed",
        .enabled(if: FileManager.default.isWritableFile(atPath: "/proc/pressure/memory")))
    func armedWherePSIExists() throws {
        let monitor = MemoryPressureMonitor(handler: {})
        #expect(monitor.isActive, "a PSI trigger window this kernel accepts must be found")
        monitor.stop()
    }
    #endif

    @Test("a pressure event empties the memory tier and leaves the disk tier")
    func purgeOnPressure() throws {
        let root = try CacheRoot()
        let cache = try ResponseCache(container: root.container)
        let monitor = MemoryPressureMonitor(pressureFiles: [], handler: { cache.purge() })
        let entry = CachedEntry(
            key: "k", status: 200, headers: [:], body: Data(count: 10), json: nil, storedAt: Date(),
            expiresAt: Date().addingTimeInterval(60), apiName: "T", sensitiveComponent: nil)
        cache.memory.store(entry)
        cache.disk?.store(entry, now: Date())
        #expect(cache.memoryUsage.count == 1)
        monitor.simulatePressure()
        #expect(cache.memoryUsage.count == 0)
        #expect(cache.disk?.entry("k", now: Date()) != nil)
        monitor.stop()
    }
}
