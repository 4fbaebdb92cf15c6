import Dispatch
import Foundation

/// A task executor that runs the first job it is given and holds every later one until
/// ``release()``: a task that prefers it runs to its first real suspension and then stops there,
/// with whatever it was waiting for done, for as long as a test needs to look at the world in
/// that moment.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class HeldExecutor: TaskExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private var started = false
    private var released = false
    private var held: [UnownedJob] = []

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        let runNow = !started || released
        started = true
        if !runNow { held.append(job) }
        lock.unlock()
        if runNow { run(job) }
    }

    /// Runs the held jobs, and every later one as it comes.
    func release() {
        lock.lock()
        released = true
        let jobs = held
        held = []
        lock.unlock()
        for job in jobs { run(job) }
    }

    private func run(_ job: UnownedJob) {
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
}
