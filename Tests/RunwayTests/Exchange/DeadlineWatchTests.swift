import Dispatch
import Testing
@testable import Runway

/// The engine's one timer over every exchange's deadline (`DeadlineWatch`) is armed at a
/// dispatch time counted in 64-bit nanoseconds: an `Int` count stops the process where `Int`
/// has 32 bits (an arm64_32 Apple Watch) for any wait past 2.1 s.
@Suite("The deadline timer's dispatch time", .timeLimit(.minutes(1)))
struct DeadlineWatchTests {
    @Test("a wait becomes the dispatch time that far ahead — past 2³¹ ns too — none before now, at most a year")
    func dispatchTime() {
        let now = DispatchTime(uptimeNanoseconds: 5_000_000_000)
        let year: UInt64 = 365 * 86_400 * 1_000_000_000
        /// How far past `now` the timer is set for a wait of `remaining`; within 100 ns, the
        /// rounding of a platform whose dispatch clock counts other units than nanoseconds.
        func ahead(_ remaining: Duration, is expected: UInt64) -> Bool {
            let set = DeadlineWatch.dispatchTime(in: remaining, from: now).uptimeNanoseconds
            let difference = Int64(bitPattern: set &- now.uptimeNanoseconds &- expected)
            return (-100...100).contains(difference)
        }
        #expect(ahead(.seconds(20), is: 20_000_000_000))
        #expect(ahead(.nanoseconds(2_147_483_648), is: 2_147_483_648))
        #expect(ahead(.seconds(4_294_967_296), is: year))
        #expect(ahead(.milliseconds(1_500), is: 1_500_000_000))
        #expect(ahead(.seconds(-3), is: 0))
        #expect(ahead(.zero, is: 0))
        #expect(ahead(.seconds(365 * 86_400), is: year))
        #expect(ahead(.seconds(Int64.max), is: year))
    }
}
