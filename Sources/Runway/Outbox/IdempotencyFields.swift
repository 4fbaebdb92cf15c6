public import HTTPTypes

extension HTTPField.Name {
    /// `Idempotency-Key` (IETF httpapi draft): the client's name for one mutation, the same on
    /// every try, so that the server applies it once. An ``Outbox`` item's ``OutboxItem/id``.
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// `Idempotent-Replayed: true` on an answer a server kept for a key and sent again, rather
    /// than ran the request again for (RunwayServer's `IdempotencyMiddleware`).
    public static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}
