/// Why an ``Outbox`` refused an item or could not do its work.
public enum OutboxError: Error, Sendable, Equatable {
    /// The outbox already holds ``Outbox/Policy/maximumItems`` items or
    /// ``Outbox/Policy/maximumBytes`` bytes; the item is not stored.
    case full(items: Int, bytes: Int)
    /// The request cannot be made as given (no such service, parameters the API's validator or
    /// encoder refuses, a body streamed from a file); the item is not stored.
    case invalidRequest(RunwayError)
    /// Only bodies held in memory are stored (`.data`, `.json`); a file or multipart form is not.
    case unsupportedBody
    /// The outbox's database could not be read or written.
    case storage(reason: String)
    /// The outbox was closed.
    case closed
}
