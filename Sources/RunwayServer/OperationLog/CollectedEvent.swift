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
    /// How far the device's clock was behind the collector's when the batch was sent, in
    /// milliseconds (the collector's receipt time minus the batch's `sent` time; negative when
    /// the device was ahead); `nil` when the batch did not say when it was sent. The event
    /// happened at about `timeMilliseconds + clockOffsetMilliseconds` on the collector's clock.
    public var clockOffsetMilliseconds: Int64?

    /// Creates an event.
    public init(id: String, name: String, timeMilliseconds: Int64, payload: Data, clockOffsetMilliseconds: Int64? = nil) {
        self.id = id
        self.name = name
        self.timeMilliseconds = timeMilliseconds
        self.payload = payload
        self.clockOffsetMilliseconds = clockOffsetMilliseconds
    }
}
