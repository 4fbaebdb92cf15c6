public import Foundation
public import Logging
public import RunwayStorage

extension ResponseCache {
    /// Opens a cache as ``init(container:limits:now:logger:)`` does, off the caller's actor.
    ///
    /// Opening the disk tier is disk work — the SQLite file, its migrations, reading its size —
    /// which a launch on the main actor must not wait for there. It runs on a dispatch queue of
    /// its own, never on a thread of Swift's cooperative pool (one thread per core: a pool thread
    /// waiting for the disk would hold back every task, the first load among them).
    ///
    /// ```swift
    /// let cache = try await ResponseCache.open(container: container)   // on a background thread
    /// let engine = Engine(transport: URLSessionTransport(), cache: cache)
    /// ```
    ///
    /// This waits for the opening and throws what it met. To make the engine without waiting for
    /// the disk at all, make the cache with ``init(openingInBackground:limits:now:logger:)``.
    ///
    /// - throws: When the disk tier can be neither opened nor made again.
    @concurrent
    public static func open(
        container: Container? = nil, limits: Limits = Limits(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "runway.cache")
    ) async throws -> ResponseCache {
        try await BlockingWork.run { try ResponseCache(container: container, limits: limits, now: now, logger: logger) }
    }
}
