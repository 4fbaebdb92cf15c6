public import Foundation

/// One mutation in an ``Outbox``: what the app asked for, as the server will see it again and
/// again until it answers.
public struct OutboxItem: Sendable, Hashable, Identifiable {
    /// The item's identity, sent as its `Idempotency-Key` on every try: a server that honours
    /// the key applies the mutation once however often it arrives. An item whose stored row is
    /// too damaged to read its identity is listed, and fails, as ``unreadableID(row:)``.
    public let id: String
    /// The queue the item is sent in: items of one queue go one at a time, in the order they
    /// were enqueued.
    public let queue: String
    /// The API's name (metrics, logs, records).
    public let apiName: String
    /// When it was enqueued, by the device's clock (the epoch, for a stored row too damaged to
    /// read it; its queue and API name are empty when those cannot be read).
    public let enqueued: Date

    /// The identity an item is reported under when its stored row is too damaged to read its
    /// own (a tampered or corrupted file): `unreadable-row-` and the row's number, so that the
    /// item is still listed and still fails visibly.
    public static func unreadableID(row: Int64) -> String {
        "unreadable-row-\(row)"
    }

    /// Where an item is on its way to the server.
    public enum State: Sendable {
        /// Stored, waiting for its turn, a reachable path or the end of a back-off.
        case pending
        /// On the wire now.
        case sending
        /// Kept, not sent: made for a sign-in that has ended (``Outbox/Policy/SignOutHandling/hold``).
        /// ``Outbox/adoptHeld()`` sends such items as the current user, ``Outbox/discardHeld()``
        /// removes them.
        case held
        /// The server answered with success; the item has left the outbox.
        case done(RawResponse)
        /// It will never succeed (a 4xx other than 401, 408, 409, 425 and 429, a request the server
        /// cannot take, too many failed tries, dropped at a sign-out, or its stored row can no
        /// longer be read); it has left the outbox.
        case failed(RunwayError)
    }
}

/// An item and the state it has just reached.
public struct OutboxUpdate: Sendable {
    /// The item.
    public let item: OutboxItem
    /// Its new state.
    public let state: OutboxItem.State
}

/// Where an item waits its turn.
public struct OutboxQueue: Sendable, Hashable, ExpressibleByStringLiteral {
    let name: String?

    /// The queue named `name`: its items go one at a time, in order.
    public init(_ name: String) { self.name = name }

    public init(stringLiteral name: String) { self.name = name }

    /// The app's one ordered queue.
    public static let main = OutboxQueue("main")

    /// A queue of the item's own: it waits for nothing else.
    public static let independent = OutboxQueue(name: nil)

    private init(name: String?) { self.name = name }
}
