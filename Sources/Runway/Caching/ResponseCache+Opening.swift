public import Foundation
public import Logging
public import RunwayStorage

extension ResponseCache {
    /// Opens a cache as ``init(container:limits:now:logger:)`` does, off the caller's actor.
    ///
    /// Opening the disk tier is disk work — the SQLite file, its migrations, reading its size —
    /// which a launch on the main actor must not wait for there: call this at launch and make the
    /// engine with what it returns.
    ///
    /// ```swift
    /// let cache = try await ResponseCache.open(container: container)   // on a background thread
    /// let engine = Engine(transport: URLSessionTransport(), cache: cache)
    /// ```
    ///
    /// - throws: When the disk tier can be neither opened nor made again.
    @concurrent
    public static func open(
        container: Container? = nil, limits: Limits = Limits(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "runway.cache")
    ) async throws -> ResponseCache {
        try ResponseCache(container: container, limits: limits, now: now, logger: logger)
    }
}
