import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayServer

extension DemoChapter {
    /// Five orders placed while the order server is away, the app relaunched, the server back:
    /// each applied once, in order, by the server's own count (seed 001: defer and batch, survive
    /// a network that comes and goes).
    static let outbox = DemoChapter("outbox", "Orders placed offline, applied once (durable outbox, Idempotency-Key)") { context, log in
        let folder = context.scratch.appendingPathComponent("order-server", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ledger = try SQLiteOrderLedger(url: folder.appendingPathComponent("orders.sqlite"))
        let desk = OrderDesk(ledger: ledger, keys: try SQLiteIdempotencyStore(url: folder.appendingPathComponent("keys.sqlite")))
        // The order server's address is taken, then it goes away: the device is "offline" for it.
        let first = try await DemoServer.start(demoRoutes: false, orders: desk)
        let port = first.port
        await first.stop()
        let engine = try context.makeEngine(cache: nil)
        try engine.register(Service(id: "orders", baseURLs: [.release: "http://127.0.0.1:\(port)"]))
        var policy = Outbox.Policy()
        policy.baseBackoff = .milliseconds(50)
        policy.maximumBackoff = .milliseconds(200)
        policy.retryPolicy = .never
        let outbox = try await Outbox.open(engine: engine, container: context.container, policy: policy)
        let updates = outbox.updates()
        var keys: [String] = []
        for position in 0..<5 {
            keys.append(try await outbox.enqueue(PlaceOrderAPI(timeout: .seconds(10)), params: ["queue": "cart", "position": .int(position)]).id)
        }
        // Wait for the first try to fail: the server is away.
        for await update in updates {
            if case .pending = update.state, update.item.id == keys[0] { break }
        }
        await outbox.close()
        log.say("5 orders placed with the server away: stored before each enqueue returned; the app quits")

        let server = try await DemoServer.start(demoRoutes: false, port: port, orders: desk)
        let relaunched = try await Outbox.open(engine: engine, container: context.container, policy: policy)
        let nextUpdates = relaunched.updates()
        let left = Set(try await relaunched.items().map(\.id))
        var done = Set<String>()
        var failed = 0
        for await update in nextUpdates where left.contains(update.item.id) {
            switch update.state {
            case .done: done.insert(update.item.id)
            case .failed: failed += 1
            default: break
            }
            if done.count + failed == left.count { break }
        }
        await relaunched.close()
        let orders = try await ledger.orders()
        await server.stop()
        log.say(
            "relaunched, server back → \(done.count) sent (each with its Idempotency-Key); the server applied \(orders.count): "
                + "positions \(orders.map { String($0.position) }.joined(separator: ", "))")
        log.figure("applied", .int(orders.count))
        log.figure("positions", .array(orders.map { .int(Int($0.position)) }))
        try log.require(
            orders.map(\.key) == keys && orders.map(\.position) == [0, 1, 2, 3, 4] && failed == 0,
            "expected the 5 orders applied once each, in the order placed")
    }
}
