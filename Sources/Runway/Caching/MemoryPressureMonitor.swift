import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Purges the memory tier when the system runs short of memory.
///
/// Apple platforms: the dispatch memory-pressure source (warning and critical). Linux: a PSI
/// trigger on `/proc/pressure/memory` (or the cgroup v2 `memory.pressure` of this process) —
/// "some" tasks stalled on memory for 15 % of a window wakes a background thread. Kernels differ
/// in the windows they accept (seen: 1 s refused, 2 s and 10 s accepted, 5 s refused), so the
/// monitor tries 1 s, 2 s and 10 s windows in turn and arms the first the kernel takes. Where the
/// kernel offers none, one log line says so and only ``ResponseCache/purge()`` remains.
public final class MemoryPressureMonitor: Sendable {
    /// Whether a pressure source is armed.
    public let isActive: Bool
    private let handler: @Sendable () -> Void
    private let stopper: Locked<(@Sendable () -> Void)?>

    /// Starts watching; `handler` runs (off the main actor) on each pressure event.
    ///
    /// - parameters:
    ///   - pressureFiles: Linux only — the PSI files to try, in order.
    ///   - logger: Receives the "unavailable" line.
    ///   - handler: What to free; ``ResponseCache/purge()`` for the response cache.
    public init(
        pressureFiles: [String] = MemoryPressureMonitor.defaultPressureFiles(), logger: Logger = Logger(label: "runway.cache"),
        handler: @escaping @Sendable () -> Void
    ) {
        self.handler = handler
        #if canImport(Darwin)
        let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global(qos: .utility))
        source.setEventHandler(handler: handler)
        source.activate()
        isActive = true
        let box = SourceBox(source)
        stopper = Locked({ box.source.cancel() })
        #else
        var armed: (Int32, String)?
        search: for path in pressureFiles {
            for trigger in Self.triggers {
                // A trigger belongs to its file descriptor: each attempt opens the file afresh.
                let descriptor = open(path, O_RDWR | O_NONBLOCK)
                guard descriptor >= 0 else { continue search }
                let written = trigger.withCString { write(descriptor, $0, strlen($0) + 1) }
                if written > 0 {
                    armed = (descriptor, "\(path) (\(trigger))")
                    break search
                }
                close(descriptor)
            }
        }
        guard let (descriptor, path) = armed else {
            logger.notice(
                "runway cache: memory-pressure notifications are unavailable here (no PSI trigger could be armed); only purge() empties the memory tier",
                metadata: ["tried": "\(pressureFiles.joined(separator: ", "))"])
            isActive = false
            stopper = Locked(nil)
            return
        }
        logger.debug("runway cache: watching memory pressure", metadata: ["psi": "\(path)"])
        isActive = true
        let running = Locked(true)
        let thread = Thread { [handler] in
            var poller = pollfd(fd: descriptor, events: Int16(POLLPRI), revents: 0)
            while running.withLock({ $0 }) {
                let ready = poll(&poller, 1, 500)
                if ready > 0, poller.revents & Int16(POLLERR) != 0 { break }
                if ready > 0, poller.revents & Int16(POLLPRI) != 0 { handler() }
            }
            close(descriptor)
        }
        thread.name = "runway.memory-pressure"
        thread.start()
        stopper = Locked({ running.withLock { $0 = false } })
        #endif
    }

    /// Stops watching.
    public func stop() {
        stopper.withLock { stop in
            stop?()
            stop = nil
        }
    }

    deinit { stop() }

    /// Runs the handler as a pressure event would: what the simulator's "Simulate Memory
    /// Warning" is to an app, for a debug menu or a test of what the app frees.
    public func simulatePressure() { handler() }

    #if canImport(Darwin)
    /// Dispatch sources are thread-safe; the box carries one into the stop closure.
    private final class SourceBox: @unchecked Sendable {
        let source: any DispatchSourceMemoryPressure
        init(_ source: any DispatchSourceMemoryPressure) { self.source = source }
    }
    #endif

    /// PSI triggers tried in order: 150 ms of a 1 s window, 300 ms of 2 s, 1.5 s of 10 s.
    static let triggers = ["some 150000 1000000", "some 300000 2000000", "some 1500000 10000000"]

    /// `/proc/pressure/memory`, then this process's cgroup v2 `memory.pressure`.
    public static func defaultPressureFiles() -> [String] {
        var files = ["/proc/pressure/memory"]
        if let cgroup = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
            let line = cgroup.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        {
            files.append("/sys/fs/cgroup\(line.dropFirst(3))/memory.pressure")
        }
        return files
    }
}
