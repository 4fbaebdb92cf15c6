public import Foundation
public import RunwayStorage
public import Logging

extension ResponseCache {
    /// The former name of ``Limits``.
    @available(*, deprecated, renamed: "Limits")
    public typealias Configuration = Limits

    /// Creates a cache.
    @available(*, deprecated, renamed: "init(container:limits:now:logger:)")
    public convenience init(
        container: Container? = nil, configuration: Limits, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "runway.cache")
    ) throws {
        try self.init(container: container, limits: configuration, now: now, logger: logger)
    }
}
