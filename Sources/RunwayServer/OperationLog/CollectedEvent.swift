public import Foundation

/// One event as the collector received it and stores it.
public struct CollectedEvent: Sendable, Hashable {
    /// The identifier the device made; the collector keeps one event per identifier.
    public var id: String
    /// What happened.
    public var name: String
    /// When, in milliseconds since 1970.
    public var timeMilliseconds: Int64
    /// The payload as encoded JSON.
    public var payload: Data

    /// Creates an event.
    public init(id: String, name: String, timeMilliseconds: Int64, payload: Data) {
        self.id = id
        self.name = name
        self.timeMilliseconds = timeMilliseconds
        self.payload = payload
    }
}
