import Foundation

/// Runs a test's blocking or CPU-heavy work (waiting for a child process, hashing megabytes) on
/// a thread of its own and awaits its result.
///
/// Swift concurrency runs every test of the suite on as many threads as there are cores — two on
/// a small CI machine — and on Linux `DispatchQueue.global()` is that same pool of threads. Work
/// that holds one of them for seconds holds up every other test's loads, whose one-second
/// deadlines then fire on exchanges that were never slow. Record issues (`#expect`) after the
/// await, on the test's own task, not inside `work`.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// ``offThePool(_:)`` for work that cannot fail.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
