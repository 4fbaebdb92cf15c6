/// What a store throws when the data is the problem: storing the same events again cannot
/// succeed, so the collector refuses them one by one instead of answering "try again later".
///
/// Any other error a store throws is taken as the store being unavailable (503, `Retry-After`).
public enum OperationLogStoreError: Error, Sendable, Hashable {
    /// The database refused a value (a constraint, a type, a size or a character it cannot hold).
    case refused(reason: String)
}
