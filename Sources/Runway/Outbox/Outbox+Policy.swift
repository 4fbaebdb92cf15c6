extension Outbox {
    /// What the outbox keeps and how it sends.
    public struct Policy: Sendable {
        /// What happens to items of a sign-in that ended (``Authentication/reset()``).
        public enum SignOutHandling: Sendable, Hashable {
            /// Keep them, unsent, until the app adopts or discards them.
            case hold
            /// Remove them, each reported ``OutboxItem/State/failed(_:)`` with ``RunwayError/userChanged``.
            case drop
        }

        /// The most items stored at once. Default 1,000.
        public var maximumItems: Int = 1_000
        /// The most bytes of parameters and bodies stored at once. Default 16 MB.
        public var maximumBytes: Int = 16 * 1024 * 1024
        /// The wait after an item's first failed try; doubled after each further failure, with
        /// jitter. Default 1 s.
        public var baseBackoff: Duration = .seconds(1)
        /// The longest wait between tries, unless `Retry-After` asks for longer. Default 5 minutes.
        public var maximumBackoff: Duration = .seconds(300)
        /// Failed tries (while the path was reachable) before an item is given up as
        /// ``OutboxItem/State/failed(_:)``. Default 500: about 40 hours at the longest back-off.
        public var maximumAttempts: Int = 500
        /// How many queues send at once. Default 4.
        public var maximumConcurrentSends: Int = 4
        /// The engine's retries within one try (safe: every try carries the item's key). Default
        /// one retry of a transient failure.
        public var retryPolicy = RetryPolicy(maximumRetries: 1, retriesNonIdempotentMethods: true)
        /// What a sign-out does to the signed-out user's items. Default ``SignOutHandling/hold``.
        public var signOut: SignOutHandling = .hold
        /// The outbox's file name inside its folder of application support.
        public var databaseName: String = "outbox.sqlite"

        /// The defaults.
        public init() {}
    }
}
