import Foundation

/// Keeps what an engine did — every request on the wire and every load — for a HAR file
/// (``httpArchive(creator:)``) or a waterfall.
///
/// Give one to ``Engine/init(transport:cache:logger:network:metrics:tracer:recorder:sleep:)``
/// in a debug build or a support screen; an engine without one records nothing and pays
/// nothing. Bodies are kept up to ``bodyLimit`` bytes each; past ``capacity`` records, the oldest
/// go, and ``droppedExchanges`` and ``droppedLoads`` say how many (a HAR file says so too).
public final class LoadRecorder: Sendable {
    /// Bytes of each request and response body kept.
    public let bodyLimit: Int
    /// Records of each kind kept; older ones are dropped first.
    public let capacity: Int
    /// The recorder's start: every record's ``ExchangeRecord/offset`` counts from it.
    let origin: ContinuousClock.Instant
    /// The wall-clock time of ``origin``.
    let originDate: Date

    private struct State {
        var exchanges: [ExchangeRecord] = []
        var loads: [LoadRecord] = []
        var droppedExchanges = 0
        var droppedLoads = 0
    }

    private let state = Locked(State())

    /// Creates an empty recorder.
    ///
    /// - parameters:
    ///   - bodyLimit: Bytes of each body kept (64 KiB by default); longer bodies are cut, and
    ///     their whole size is still recorded.
    ///   - capacity: Records of each kind kept (2,000 by default).
    public init(bodyLimit: Int = 64 * 1024, capacity: Int = 2_000) {
        self.bodyLimit = max(0, bodyLimit)
        self.capacity = max(1, capacity)
        self.origin = .now
        self.originDate = Date()
    }

    /// Every exchange kept, oldest first.
    public var exchanges: [ExchangeRecord] { state.withLock { $0.exchanges } }
    /// Every load kept, oldest first.
    public var loads: [LoadRecord] { state.withLock { $0.loads } }
    /// Exchanges dropped because more than ``capacity`` were recorded.
    public var droppedExchanges: Int { state.withLock { $0.droppedExchanges } }
    /// Loads dropped because more than ``capacity`` were recorded.
    public var droppedLoads: Int { state.withLock { $0.droppedLoads } }

    /// The exchanges kept and how many were dropped, read together.
    var exchangesAndDropped: ([ExchangeRecord], Int) { state.withLock { ($0.exchanges, $0.droppedExchanges) } }

    /// Forgets every record.
    public func clear() {
        state.withLock { $0 = State() }
    }

    /// The wall-clock time and the offset from the recorder's start of `instant`.
    func stamp(_ instant: ContinuousClock.Instant) -> (Date, Duration) {
        let offset = instant - origin
        return (originDate.addingTimeInterval(Double(offset.milliseconds) / 1_000), offset)
    }

    /// `data` cut to the body limit.
    func kept(_ data: Data) -> Data {
        data.count <= bodyLimit ? data : Data(data.prefix(bodyLimit))
    }

    func record(_ exchange: ExchangeRecord) {
        state.withLock { Self.append(exchange, to: &$0.exchanges, dropping: &$0.droppedExchanges, capacity: capacity) }
    }

    func record(_ load: LoadRecord) {
        state.withLock { Self.append(load, to: &$0.loads, dropping: &$0.droppedLoads, capacity: capacity) }
    }

    /// Appends `record`, dropping the oldest (and counting it) past `capacity`.
    private static func append<Record>(_ record: Record, to records: inout [Record], dropping dropped: inout Int, capacity: Int) {
        records.append(record)
        guard records.count > capacity else { return }
        dropped += records.count - capacity
        records.removeFirst(records.count - capacity)
    }

    /// Adds a manager's reform time to the load's record.
    func recordReform(of loadID: LoadID, took duration: Duration) {
        state.withLock { state in
            guard let index = state.loads.lastIndex(where: { $0.loadID == loadID }) else { return }
            state.loads[index].timings[.reform] = duration
        }
    }
}
