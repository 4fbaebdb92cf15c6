public import Foundation

/// Why the operation log refused an event or could not deliver.
public enum OperationLogError: Error, Sendable, Hashable {
    /// The event's name is empty, longer than ``OperationEvent/maximumNameLength`` bytes, or
    /// holds a NUL character (which no collector's database stores as text).
    case invalidName(String)
    /// The event's payload could not be encoded as JSON, or holds a NUL character in a string
    /// or key.
    case unencodablePayload(reason: String)
    /// The event's time is before 1970 or beyond what milliseconds since then can hold: a
    /// collector refuses it.
    case invalidTime(Date)
    /// The encoded event is larger than the configured limit.
    case eventTooLarge(size: Int, limit: Int)
    /// The queue's database failed; the events concerned were not committed.
    case storage(reason: String)
    /// An upload failed; the events stay queued for the next attempt.
    case uploadFailed(RunwayError)
    /// The log was closed.
    case closed
}
