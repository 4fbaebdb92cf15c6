/// The strictness settings of incoming-URL parsing.
public struct LinkLimits: Sendable, Hashable {
    /// What to do when a query key appears more than once.
    public enum DuplicateKeys: Sendable, Hashable {
        /// Refuse the URL (the default): `?id=1&id=2` is ambiguous, and ambiguity is where
        /// validation and use disagree.
        case reject
        /// Keep the first value.
        case first
        /// Keep the last value.
        case last
    }

    /// The longest URL accepted, in bytes. Default 2,048.
    public var maximumLength: Int
    /// The rule for repeated query keys. Default ``DuplicateKeys/reject``.
    public var duplicateKeys: DuplicateKeys

    public init(maximumLength: Int = 2048, duplicateKeys: DuplicateKeys = .reject) {
        self.maximumLength = maximumLength
        self.duplicateKeys = duplicateKeys
    }
}
