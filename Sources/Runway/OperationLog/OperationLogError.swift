/// Why the operation log refused an event or could not deliver.
public enum OperationLogError: Error, Sendable, Hashable {
    /// The event's name is empty or longer than ``OperationEvent/maximumNameLength`` bytes.
    case invalidName(String)
    /// The event's payload could not be encoded as JSON.
    case unencodablePayload(reason: String)
    /// The encoded event is larger than the configured limit.
    case eventTooLarge(size: Int, limit: Int)
    /// The queue's database failed; the events concerned were not committed.
    case storage(reason: String)
    /// An upload failed; the events stay queued for the next attempt.
    case uploadFailed(RunwayError)
    /// The log was closed.
    case closed
}
