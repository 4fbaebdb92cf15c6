public import Foundation

/// One user operation worth reporting: what happened, when, and a small JSON payload.
///
/// Its ``id`` is made on the device when the event is recorded and never changes, through every
/// retry and relaunch, so the collector stores each event once however often it arrives.
public struct OperationEvent: Sendable, Hashable, Identifiable {
    /// The event's identifier: a UUID, lowercased.
    public let id: String
    /// What happened, such as `"listing.opened"`.
    public let name: String
    /// When it happened, in milliseconds since 1970.
    public let timeMilliseconds: Int64
    /// The payload as encoded JSON.
    public let payload: Data

    /// The time of the event.
    public var time: Date { Date(timeIntervalSince1970: Double(timeMilliseconds) / 1000) }

    init(id: String, name: String, timeMilliseconds: Int64, payload: Data) {
        self.id = id
        self.name = name
        self.timeMilliseconds = timeMilliseconds
        self.payload = payload
    }

    /// The longest event name accepted, in UTF-8 bytes.
    public static let maximumNameLength = 128
}

/// How a batch travels: `{"sent":…,"events":[{"id":…,"name":…,"time":…,"payload":…},…]}`,
/// gzip-compressed; `sent` is the device's clock as the batch leaves, in milliseconds since 1970.
///
/// Payloads are stored encoded and copied into the batch as they are: an upload never parses
/// what it sends.
enum OperationBatchFormat {
    static func encode(_ events: [OperationEvent], sentAt sent: Int64) -> Data {
        var body = Data()
        body.reserveCapacity(events.reduce(40) { $0 + $1.payload.count + $1.name.utf8.count + 80 })
        body.append(contentsOf: #"{"sent":"#.utf8)
        body.append(contentsOf: String(sent).utf8)
        body.append(contentsOf: #","events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"id":""#.utf8)
            body.append(contentsOf: event.id.utf8)
            body.append(contentsOf: #"","name":"#.utf8)
            body.append(quoted(event.name))
            body.append(contentsOf: #","time":"#.utf8)
            body.append(contentsOf: String(event.timeMilliseconds).utf8)
            body.append(contentsOf: #","payload":"#.utf8)
            body.append(event.payload)
            body.append(UInt8(ascii: "}"))
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> Data {
        // A string always encodes; the fallback keeps the batch well-formed regardless.
        (try? JSON.string(text).encoded()) ?? Data(#""""#.utf8)
    }
}
