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

    /// The largest offset learnt: a week. A device clock a day off is already far from anything
    /// a user sets by hand (and is corrected); a server's time a week or more away is a broken or
    /// hostile answer.
    static let limit: TimeInterval = 7 * 86_400

    /// Learns the offset from the server's time and this device's time when the answer came.
    ///
    /// - returns: Whether it was learnt: an offset beyond ``limit`` (or not a number) is refused,
    ///   and the offset stays as it was.
    func learn(serverTime: Date, localTime: Date) -> Bool {
        let offset = serverTime.timeIntervalSince(localTime)
        guard offset.isFinite, abs(offset) <= Self.limit else { return false }
        seconds.withLock { $0 = offset }
        return true
    }
}
