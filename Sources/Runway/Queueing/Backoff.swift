/// The wait before the next try of work that failed for a reason that may pass (a 5xx, a lost
/// connection): doubling from a base, capped, with the upper half jittered so that many
/// devices that failed together do not come back together; a longer `Retry-After` wins (up to
/// a day). The operation log's batches and the outbox's items wait by it.
struct Backoff: Sendable, Hashable {
    /// The wait after the first failure.
    var base: Duration
    /// The longest wait, unless `Retry-After` asks for longer.
    var maximum: Duration

    /// The wait after the `failures`-th failure in a row.
    func delay(
        afterFailures failures: Int, retryAfter: Duration?, using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let doubled = min(base * (1 << exponent), maximum)
        let jittered = doubled / 2 + doubled / 2 * Double.random(in: 0...1, using: &generator)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, .seconds(86_400)))
    }

    /// `duration` in whole milliseconds, as ``BootClock`` counts.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
