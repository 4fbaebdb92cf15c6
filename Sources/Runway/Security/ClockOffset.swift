import Foundation

/// How far this device's clock is from a server's, as a signer learned it from an answer that
/// refused a request for its time: added to the signer's clock for every later signature.
///
/// A reference shared by every copy of the signer that holds it, so a correction learned by one
/// load serves every later load of the service.
final class ClockOffset: Sendable {
    private let seconds = Locked<TimeInterval>(0)

    /// The offset now, in seconds (the server's clock minus this device's).
    var value: TimeInterval { seconds.withLock { $0 } }

    /// `clock`'s time, corrected by the offset.
    func adjusted(_ clock: Date) -> Date { clock.addingTimeInterval(value) }

    /// Learns the offset from the server's time and this device's time when the answer came.
    func learn(serverTime: Date, localTime: Date) {
        let offset = serverTime.timeIntervalSince(localTime)
        guard offset.isFinite else { return }
        seconds.withLock { $0 = offset }
    }
}
