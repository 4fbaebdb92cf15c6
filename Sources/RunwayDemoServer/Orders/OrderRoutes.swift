import Foundation
import HTTPTypes
import Hummingbird
import Runway
import NIOConcurrencyHelpers
public import RunwayServer

/// The demo's orders: `POST /orders` applies one order (JSON `{"queue": "…", "position": n}`)
/// under its `Idempotency-Key`, `GET /orders` lists what the server applied — the count the
/// outbox's demo chapter and crash tests read.
public struct OrderDesk: Sendable {
    /// Where applied orders are kept.
    public var ledger: any OrderLedger
    /// Where the idempotency middleware keeps keys and answers.
    public var keys: any IdempotencyStore
    /// The middleware's bounds (the crash tests shorten the lease).
    public var limits: IdempotencyMiddleware<ServerRequestContext>.Limits
    /// Every this many orders one is answered `slowAnswer` after it was applied: the answer a
    /// client's timeout (or a killed server) loses. `nil`: none.
    public var slowEvery: Int?
    /// How long a slow answer takes.
    public var slowAnswer: Duration

    public init(
        ledger: any OrderLedger, keys: any IdempotencyStore,
        limits: IdempotencyMiddleware<ServerRequestContext>.Limits = .init(), slowEvery: Int? = nil,
        slowAnswer: Duration = .seconds(3)
    ) {
        self.ledger = ledger
        self.keys = keys
        self.limits = limits
        self.slowEvery = slowEvery
        self.slowAnswer = slowAnswer
    }
}

enum OrderRoutes {
    static func add(to group: RouterGroup<ServerRequestContext>, desk: OrderDesk) {
        let count = NIOLockedValueBox(0)
        let keys = IdempotencyMiddleware<ServerRequestContext>(store: desk.keys, limits: desk.limits)
        group.add(middleware: keys)
            .post { request, context -> Response in
                guard let key = request.headers[.idempotencyKey] else {
                    return JSONResponse.make(["code": 428, "reason": "idempotency_key_required"], status: .init(code: 428))
                }
                let body = try await request.body.collect(upTo: 64 * 1024)
                guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                    let queue = object["queue"] as? String, let position = (object["position"] as? NSNumber)?.int64Value
                else {
                    return JSONResponse.make(["code": 400, "reason": "queue_and_position_required"], status: .badRequest)
                }
                let (number, applied) = try await desk.ledger.apply(
                    client: keys.client(of: request, context: context), key: key, queue: queue, position: position)
                let seen = count.withLockedValue { count in
                    count += 1
                    return count
                }
                if let every = desk.slowEvery, every > 0, seen % every == 0 {
                    try await Task.sleep(for: desk.slowAnswer)
                }
                return JSONResponse.make(["number": number, "applied": applied, "queue": queue, "position": position], status: .created)
            }
        group.get { _, _ -> Response in
            let orders = try await desk.ledger.orders()
            return JSONResponse.make([
                "count": orders.count,
                "orders": orders.map { ["number": $0.number, "key": $0.key, "queue": $0.queue, "position": $0.position] },
            ])
        }
    }
}
