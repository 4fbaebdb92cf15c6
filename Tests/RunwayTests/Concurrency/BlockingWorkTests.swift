import Foundation
import Testing
@testable import Runway

#if canImport(Glibc)
import Glibc
#endif

/// Blocking work (an opening's SQLite and file I/O) runs off Swift's cooperative pool, at the
/// caller's priority.
@Suite("Blocking work", .timeLimit(.minutes(10)))
struct BlockingWorkTests {
    struct Refused: Error, Equatable { var reason: String }

    @Test("the work runs as blocking work, not on the caller's thread, and hands back its value or its typed error", arguments: [TaskPriority.medium, .utility, .background])
    func valueAndError(_ priority: TaskPriority) async throws {
        let value = await BlockingWork.run(priority: priority) { BlockingWork.isCurrent ? 42 : -1 }
        #expect(value == 42)
        #expect(!BlockingWork.isCurrent)
        do {
            try await BlockingWork.run(priority: priority) { () throws(Refused) in throw Refused(reason: "full") }
            Issue.record("the error must come back")
        } catch {
            #expect(error == Refused(reason: "full"))
        }
    }

    #if os(Linux)
    /// The nice value of the calling thread (on Linux, `getpriority` with 0 reads the thread's).
    static func niceNow() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test("on Linux, the work runs at the caller's priority: below .medium at a higher nice value than .medium's, .background higher still")
    func niceOnLinux() async throws {
        let medium = await BlockingWork.run(priority: .medium) { Self.niceNow() }
        let utility = await BlockingWork.run(priority: .utility) { Self.niceNow() }
        let background = await BlockingWork.run(priority: .background) { Self.niceNow() }
        #expect(medium < utility && utility < background, "nice \(medium), \(utility), \(background)")
        // The caller's priority when none is given. (Read through a stream: awaiting the task's
        // value would raise its priority to the waiter's.)
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        Task(priority: .utility) { continuation.yield(await BlockingWork.run { Self.niceNow() }) }
        var fromUtilityTask: Int32?
        for await nice in stream {
            fromUtilityTask = nice
            break
        }
        #expect(fromUtilityTask == utility)
    }
    #endif
}
