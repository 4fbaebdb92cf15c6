import RunwayTestSupport
import Testing
@testable import Runway

/// The manager's in-flight bookkeeping as a plain state machine, with no I/O.
@Suite("LoadBook state machine", .timeLimit(.minutes(10)))
struct LoadBookTests {
    typealias Book = LoadBook<String, String>

    let a = LoadID(rawValue: 1)
    let b = LoadID(rawValue: 2)
    let c = LoadID(rawValue: 3)

    @Test("allow-concurrent records every load; each finishes once")
    func allowConcurrent() {
        var book = Book()
        #expect(book.admit(a, context: "a", strategy: .allowConcurrent, notifiesDelegate: true, waiter: nil).0 == .start(cancelling: []))
        #expect(book.admit(b, context: "b", strategy: .allowConcurrent, notifiesDelegate: false, waiter: "w").0 == .start(cancelling: []))
        #expect(book.inFlight == [a, b])
        #expect(book.finish(a)?.context == "a")
        #expect(book.finish(a) == nil, "a second finish of the same load hands back nothing")
        #expect(book.finish(b)?.waiters == ["w"])
        #expect(book.isEmpty)
    }

    @Test("ignore-new joins the in-flight load, and its waiter rides along")
    func ignoreNew() {
        var book = Book()
        _ = book.admit(a, context: "a", strategy: .ignoreNewWhileLoading, notifiesDelegate: true, waiter: nil)
        let (admission, cancelled) = book.admit(b, context: "b", strategy: .ignoreNewWhileLoading, notifiesDelegate: false, waiter: "late")
        #expect(admission == .join(a))
        #expect(cancelled.isEmpty)
        #expect(book.inFlight == [a])
        let entry = book.finish(a)
        #expect(entry?.notifiesDelegate == true)
        #expect(entry?.waiters == ["late"])
    }

    @Test("ignore-new joins the first joinable load, never one its caller runs in its own task")
    func joinsOnlyJoinable() {
        var book = Book()
        _ = book.admit(a, context: "a", strategy: .allowConcurrent, notifiesDelegate: false, waiter: "own", joinable: false)
        let (first, _) = book.admit(b, context: "b", strategy: .ignoreNewWhileLoading, notifiesDelegate: true, waiter: nil)
        #expect(first == .start(cancelling: []), "nothing joinable flies: the load starts its own")
        let (second, _) = book.admit(c, context: "c", strategy: .ignoreNewWhileLoading, notifiesDelegate: false, waiter: "late")
        #expect(second == .join(b))
        #expect(book.finish(a)?.waiters == ["own"])
        #expect(book.finish(b)?.waiters == ["late"])
    }

    @Test("cancel-in-flight hands back every superseded load, finished, and records the new one")
    func cancelInFlight() {
        var book = Book()
        _ = book.admit(a, context: "a", strategy: .allowConcurrent, notifiesDelegate: true, waiter: nil)
        _ = book.admit(b, context: "b", strategy: .allowConcurrent, notifiesDelegate: true, waiter: nil)
        let (admission, cancelled) = book.admit(c, context: "c", strategy: .cancelInFlight, notifiesDelegate: true, waiter: nil)
        #expect(admission == .start(cancelling: [a, b]))
        #expect(cancelled.map(\.1.context) == ["a", "b"])
        #expect(book.inFlight == [c])
        #expect(book.finish(a) == nil, "a superseded load's late landing is dropped")
    }

    @Test("abandoning the only waiter of a delegate-less load asks for it to be cancelled")
    func abandon() {
        var book = Book()
        _ = book.admit(a, context: "a", strategy: .ignoreNewWhileLoading, notifiesDelegate: false, waiter: "first")
        _ = book.admit(b, context: "b", strategy: .ignoreNewWhileLoading, notifiesDelegate: false, waiter: "second")
        #expect(book.abandon(where: { $0 == "first" }) == nil, "another caller still waits")
        #expect(book.abandon(where: { $0 == "second" }) == a)
        _ = book.admit(c, context: "c", strategy: .allowConcurrent, notifiesDelegate: true, waiter: "w")
        #expect(book.abandon(where: { $0 == "w" }) == nil, "the delegate still expects it")
    }

    @Test("finishAll empties the book in start order")
    func finishAll() {
        var book = Book()
        for (id, name) in [(a, "a"), (b, "b"), (c, "c")] {
            _ = book.admit(id, context: name, strategy: .allowConcurrent, notifiesDelegate: true, waiter: nil)
        }
        #expect(book.finishAll().map(\.1.context) == ["a", "b", "c"])
        #expect(book.isEmpty)
    }
}
