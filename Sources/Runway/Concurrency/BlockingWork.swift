import Dispatch

/// Runs work that blocks its thread (opening an SQLite file, `fsync`, reading a file) on a
/// dispatch queue and suspends the caller meanwhile.
///
/// Swift's cooperative pool has one thread per core: a pool thread waiting for the disk is a core
/// that runs nothing else, so on a two-core device two openings at launch would stall every task
/// of the app, the first load among them. Dispatch's own threads may wait; the pool's should not.
///
/// Each call gets a serial queue of its own: serial queues draw on dispatch's overcommitting
/// threads, which it adds when others wait. A concurrent queue's work shares the pool of its
/// priority, which on Linux is the one Swift's tasks of that priority run on.
///
/// The work runs at the caller's priority, as the queue's quality of service: the scheduler's
/// priority on Apple platforms, a nice value on Linux (dispatch runs utility work at nice 2 and
/// background work at nice 10 there; user-initiated work at -2 where the process may lower it).
/// An app that opens what its first screen does not need from a `Task(priority: .utility)` lets
/// the first load have the CPU first — and a user-initiated opening would take it from the load.
enum BlockingWork {
    /// The label of the queues blocking work runs on.
    static let label = "runway.blocking-work"

    /// Marks the queues blocking work runs on.
    static let marker = DispatchSpecificKey<Bool>()

    /// Whether the caller runs as blocking work, on a queue of its own.
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }

    /// Runs `body` on a queue of its own at `priority` (the caller's when `nil`) and hands back
    /// what it returned or threw.
    static func run<Value: Sendable, Failure: Error>(
        priority: TaskPriority? = nil, _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await BlockingLane(priority: priority).run(body)
    }

    /// The dispatch quality of service of a task priority.
    static func qualityOfService(for priority: TaskPriority) -> DispatchQoS {
        switch priority {
        case .high...: .userInitiated
        case .medium...: .default
        case .low...: .utility
        default: .background
        }
    }
}
