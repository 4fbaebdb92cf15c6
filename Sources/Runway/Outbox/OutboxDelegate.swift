/// Learns of every change of an ``Outbox`` item's state, on the main actor, in order.
@MainActor
public protocol OutboxDelegate: AnyObject {
    /// `update.item` has reached `update.state`.
    func outbox(_ outbox: Outbox, didUpdate update: OutboxUpdate)
}
