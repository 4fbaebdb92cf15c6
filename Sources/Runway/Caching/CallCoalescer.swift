/// Lets identical in-flight cacheable loads share one network call.
///
/// The first load of a key starts the call; later ones join it. A joiner whose task is cancelled
/// stops waiting at once, and the shared call is cancelled only when nobody waits any more.
final class CallCoalescer: Sendable {
    typealias Outcome = Result<RawResponse, RunwayError>

    private final class Call: Sendable {
        let waiters = Locked<[ObjectIdentifier: OneShot<Outcome>]>([:])
        let task = Locked<Task<Void, Never>?>(nil)
    }

    private let calls = Locked<[String: Call]>([:])
    /// Told each time a load joins or starts a call (tests wait on it).
    let joined = Locked<(@Sendable (String, Int) -> Void)?>(nil)

    /// Runs `operation` once per key among concurrent callers, handing each the outcome.
    func run(_ key: String, _ operation: @escaping @Sendable () async -> Outcome) async -> Outcome {
        let waiter = OneShot<Outcome>()
        let identity = ObjectIdentifier(waiter)
        let (call, count) = calls.withLock { calls -> (Call, Int) in
            if let existing = calls[key] {
                let count = existing.waiters.withLock { waiters in
                    waiters[identity] = waiter
                    return waiters.count
                }
                return (existing, count)
            }
            let call = Call()
            call.waiters.withLock { $0[identity] = waiter }
            calls[key] = call
            // Started under the lock, so a waiter can never find the call without its task.
            call.task.withLock {
                $0 = Task {
                    let outcome = await operation()
                    let waiting = self.calls.withLock { calls -> [OneShot<Outcome>] in
                        if calls[key] === call { calls.removeValue(forKey: key) }
                        return call.waiters.withLock { Array($0.values) }
                    }
                    for waiter in waiting { waiter.resolve(outcome) }
                }
            }
            return (call, 1)
        }
        joined.withLock { $0 }?(key, count)
        return await withTaskCancellationHandler {
            await waiter.value
        } onCancel: {
            waiter.resolve(.failure(.cancelled))
            let nobodyLeft = call.waiters.withLock { waiters in
                waiters.removeValue(forKey: identity)
                return waiters.isEmpty
            }
            if nobodyLeft {
                self.calls.withLock { calls in
                    if calls[key] === call { calls.removeValue(forKey: key) }
                }
                call.task.withLock { $0 }?.cancel()
            }
        }
    }
}
