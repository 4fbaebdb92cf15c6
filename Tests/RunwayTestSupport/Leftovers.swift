import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every child this process started and has not seen end, killed when the process exits: a test
/// that never reached its clean-up (past its time limit, or failed before it) would otherwise
/// leave its server running after the suite — seen: `runway serve` children and httpbin's
/// workers still there after a failed run. `SIGKILL`, since a child may block the gentler ones
/// (`unshare` blocks `SIGTERM`); gunicorn's workers then see their parent gone and stop (read
/// in its `gthread` worker, which checks its parent at every turn of its loop).
/// A child is taken off the list when a wait or a poll reaps it, so no process id is signalled
/// after it could have been reused. (A process killed outright runs no exit handler: what
/// `PostgresCluster` sweeps by owner is for that.)
final class Leftovers: @unchecked Sendable {
    static let shared = Leftovers()

    private let lock = NSLock()
    private var running: Set<pid_t> = []

    private init() {
        atexit { Leftovers.shared.killAll() }
    }

    func add(_ pid: pid_t) {
        lock.withLock { _ = running.insert(pid) }
    }

    func remove(_ pid: pid_t) {
        lock.withLock { _ = running.remove(pid) }
    }

    func contains(_ pid: pid_t) -> Bool {
        lock.withLock { running.contains(pid) }
    }

    /// Kills every child still on the list (the exit handler).
    private func killAll() {
        let children = lock.withLock { running }
        for pid in children { kill(pid, SIGKILL) }
    }
}
