import Foundation
import GRDB
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayNIO
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// `POST /orders` of the demo server.
struct PlaceOrder: API {
    /// A retry trigger more than a deadline: Linux URLSession sends a POST again without its body
    /// when its reused connection died (a server restarted under it), and that try waits out
    /// its deadline; the outbox sends the item again after it, and the key keeps it once. The
    /// lost-answers test sets 2 s for that reason.
    var timeout: Duration = .seconds(30)
    var service: ServiceID { "orders" }
    var path: String { "/orders" }
    var method: HTTPRequest.Method { .post }
    var paramEncoding: ParamEncoding { .json }
}

/// A delegate that hands each update on, from the main actor.
@MainActor
final class OutboxWatcher: OutboxDelegate {
    let (updates, continuation) = AsyncStream.makeStream(of: OutboxUpdate.self)

    func outbox(_ outbox: Outbox, didUpdate update: OutboxUpdate) {
        MainActor.assertIsolated()
        continuation.yield(update)
    }
}

/// The outbox against the demo's order route behind `IdempotencyMiddleware`, over real HTTP on
/// both transports: order per queue, a server that is away and comes back, a relaunch, a 4xx
/// that ends an item, a sign-out, and its bounds.
@Suite("Outbox", .timeLimit(.minutes(10)))
struct OutboxTests {
    /// A folder for the server's files and the device's container; a port nobody listens on yet.
    struct Setting {
        let folder: URL
        let port: Int
        var container: Container { Container(root: folder.appendingPathComponent("device")) }
        var ledger: SQLiteOrderLedger { get throws { try SQLiteOrderLedger(url: folder.appendingPathComponent("orders.sqlite")) } }

        /// The order server on the setting's port, with its files: stopped and started again, it
        /// is the same server.
        func startServer(ledger given: (any OrderLedger)? = nil) async throws -> DemoServer {
            let desk = OrderDesk(
                ledger: try given ?? ledger, keys: try SQLiteIdempotencyStore(url: folder.appendingPathComponent("keys.sqlite")))
            return try await DemoServer.start(demoRoutes: false, port: port, orders: desk)
        }

        /// An engine over `kind` whose `orders` service is this setting's server, or the port `via`
        /// (a proxy in front of it).
        func engine(_ kind: TransportKind, authentication: Authentication? = nil, via: Int? = nil) throws -> (Engine, () async -> Void) {
            let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
            let engine = Engine(transport: nio ?? URLSessionTransport())
            try engine.register(
                Service(
                    id: "orders", baseURLs: [.release: "http://127.0.0.1:\(via ?? port)"], credentials: .init(authentication: authentication),
                    connection: .init(allowsInsecureHTTP: true)))
            return (engine, { try? await nio?.shutdown() })
        }

        /// An outbox on this setting's container over `kind` — with the order server running when
        /// `serving` — closed, and the server stopped, after `body`.
        func withOutbox<T>(
            isolation: isolated (any Actor)? = #isolation, _ kind: TransportKind, serving: Bool,
            authentication: Authentication? = nil, policy: Outbox.Policy = OutboxTests.quick, via: Int? = nil,
            _ body: (Outbox) async throws -> T
        ) async throws -> T {
            let server = serving ? try await startServer() : nil
            let (engine, shutdown) = try self.engine(kind, authentication: authentication, via: via)
            let outbox = try await Outbox.open(
                engine: engine, container: container, authentication: authentication, policy: policy)
            return try await withCleanup({
                await outbox.close()
                await shutdown()
                await server?.stop()
            }) {
                try await body(outbox)
            }
        }
    }

    static var quick: Outbox.Policy {
        var policy = Outbox.Policy()
        policy.baseBackoff = .milliseconds(20)
        policy.maximumBackoff = .milliseconds(200)
        policy.retryPolicy = .never
        return policy
    }

    static func withSetting<T>(isolation: isolated (any Actor)? = #isolation, _ body: (Setting) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await withCleanup({ try? FileManager.default.removeItem(at: folder) }) {
            try await body(Setting(folder: folder, port: try LoopbackSocket.freePort()))
        }
    }

    /// Reads `updates` until `enough` says so; returns what was read.
    static func read(
        _ updates: AsyncStream<OutboxUpdate>, until enough: ([OutboxUpdate]) -> Bool
    ) async -> [OutboxUpdate] {
        var seen: [OutboxUpdate] = []
        for await update in updates {
            seen.append(update)
            if enough(seen) { break }
        }
        return seen
    }

    static func done(_ updates: [OutboxUpdate]) -> [String] {
        updates.compactMap { if case .done = $0.state { $0.item.id } else { nil } }
    }

    static func order(_ queue: String, _ position: Int) -> Parameters {
        ["queue": .string(queue), "position": .int(position)]
    }

    @Test("Orders in two queues are applied once each, in order per queue; every state reaches the stream and the delegate", arguments: TransportKind.allCases)
    func ordersInQueues(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            try await setting.withOutbox(kind, serving: true) { outbox in
                let watcher = await MainActor.run { OutboxWatcher() }
                await MainActor.run { outbox.delegate = watcher }
                let updates = outbox.updates()
                var items: [OutboxItem] = []
                for index in 0..<10 {
                    let queue = index.isMultiple(of: 2) ? "a" : "b"
                    items.append(
                        try await outbox.enqueue(PlaceOrder(), params: Self.order(queue, index / 2), queue: OutboxQueue(queue)))
                }
                let seen = await Self.read(updates) { Self.done($0).count == 10 }
                #expect(Set(Self.done(seen)) == Set(items.map(\.id)))
                for item in items {
                    let states = seen.filter { $0.item.id == item.id }.map { "\($0.state)".prefix(4) }
                    #expect(states == ["pend", "send", "done"], "\(item.id)")
                }
                let delegated = await Self.read(watcher.updates) { Self.done($0).count == 10 }
                #expect(delegated.count == seen.count)
                let orders = try await setting.ledger.orders()
                #expect(orders.map(\.key).sorted() == items.map(\.id).sorted(), "each applied once")
                for queue in ["a", "b"] {
                    #expect(orders.filter { $0.queue == queue }.map(\.position) == [0, 1, 2, 3, 4], "in order in \(queue)")
                }
                #expect(try await outbox.items().isEmpty)
            }
        }
    }

    /// The sender can see an item the moment its row is committed, before `enqueue` has reported
    /// it. Here `enqueue` is held right after the commit (``HeldExecutor``) while the sender,
    /// woken by another item's back-off, takes the new item: its `.pending` must still come first.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test("an item is reported pending before sending, even when the sender takes it before enqueue returns")
    func pendingBeforeSending() async throws {
        try await Self.withSetting { setting in
            // No server: the first item fails and backs off, so the sender keeps looking.
            try await setting.withOutbox(.asyncHTTPClient, serving: false) { outbox in
                let updates = outbox.updates()
                _ = try await outbox.enqueue(PlaceOrder(), params: Self.order("a", 0), queue: OutboxQueue("a"))
                let held = HeldExecutor()
                let enqueuing = Task {
                    try await withTaskExecutorPreference(held) {
                        try await outbox.enqueue(PlaceOrder(), params: Self.order("b", 0), queue: OutboxQueue("b"))
                    }
                }
                // The item of queue "b" is taken while its enqueue is held after the commit.
                let seen = await Self.read(updates) { seen in
                    seen.contains { $0.item.queue == "b" && "\($0.state)".hasPrefix("send") }
                }
                held.release()
                let item = try await enqueuing.value
                let states = seen.filter { $0.item.id == item.id }.map { String("\($0.state)".prefix(4)) }
                #expect(states == ["pend", "send"])
            }
        }
    }

    @Test("Enqueued with the server away, the app relaunched, the server back: each order applied once, in order", arguments: TransportKind.allCases)
    func offlineRelaunchAndBack(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            var enqueued: [OutboxItem] = []
            try await setting.withOutbox(kind, serving: false) { outbox in
                let updates = outbox.updates()
                for position in 0..<6 { enqueued.append(try await outbox.enqueue(PlaceOrder(), params: Self.order("main", position))) }
                // A try failed (nobody listens): the first item is pending again, with a back-off.
                let seen = await Self.read(updates) { seen in
                    seen.contains { if case .sending = $0.state { true } else { false } }
                        && seen.last.map { if case .pending = $0.state { $0.item.id == enqueued[0].id } else { false } } == true
                }
                #expect(!seen.contains { if case .done = $0.state { true } else { false } })
            }
            try await setting.withOutbox(kind, serving: true) { outbox in
                // Subscribed first, then the items left read: one answered before the reading is not
                // waited for, one answered after it sends its update.
                let updates = outbox.updates()
                let left = Set(try await outbox.items().map(\.id))
                if !left.isEmpty {
                    let seen = await Self.read(updates) { left.isSubset(of: Set(Self.done($0))) }
                    #expect(Set(Self.done(seen)).isSubset(of: Set(enqueued.map(\.id))))
                }
                let orders = try await setting.ledger.orders()
                #expect(orders.map(\.key) == enqueued.map(\.id), "each once, in the order enqueued")
                #expect(orders.map(\.position) == [0, 1, 2, 3, 4, 5])
            }
        }
    }

    /// The orders of `inner`, counting how often the route applied one.
    final class CountingLedger: OrderLedger {
        let inner: any OrderLedger
        let applies = TestBox(0)

        init(_ inner: any OrderLedger) { self.inner = inner }

        func apply(client: String, key: String, queue: String, position: Int64) async throws -> (number: Int64, applied: Bool) {
            applies.mutate { $0 += 1 }
            return try await inner.apply(client: client, key: key, queue: queue, position: position)
        }

        func orders() async throws -> [AppliedOrder] { try await inner.orders() }
    }

    @Test("Answers lost on the way back (a proxy cuts every third): each order is sent again with its key, answered from the kept answer, applied once, in order", arguments: TransportKind.allCases)
    func lostAnswers(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            let ledger = CountingLedger(try setting.ledger)
            let server = try await setting.startServer(ledger: ledger)
            let proxy = try await AnswerDroppingProxy.start(to: setting.port, dropEvery: 3)
            try await withCleanup({
                await proxy.stop()
                await server.stop()
            }) {
                try await setting.withOutbox(kind, serving: false, via: proxy.port) { outbox in
                    let updates = outbox.updates()
                    var items: [OutboxItem] = []
                    // Linux's URLSession (libcurl) sends a POST whose reused connection died again
                    // by itself, on a new connection, without its body: the try hangs until its
                    // deadline. A short one keeps that cheap; a deadline that fires on a busy
                    // machine is one more try with the same key, which changes no count below.
                    let api = PlaceOrder(timeout: .seconds(2))
                    for index in 0..<12 {
                        let queue = index.isMultiple(of: 2) ? "a" : "b"
                        items.append(
                            try await outbox.enqueue(api, params: Self.order(queue, index / 2), queue: OutboxQueue(queue)))
                    }
                    let seen = await Self.read(updates) { Self.done($0).count == 12 }
                    #expect(Set(Self.done(seen)) == Set(items.map(\.id)))
                    let orders = try await ledger.orders()
                    #expect(orders.map(\.key).sorted() == items.map(\.id).sorted(), "each applied once")
                    for queue in ["a", "b"] {
                        #expect(orders.filter { $0.queue == queue }.map(\.position) == [0, 1, 2, 3, 4, 5], "in order in \(queue)")
                    }
                    // Every third request's answer was lost (at least 4 of 12 or more), each such order
                    // was sent again with the same key, and the server answered the repeat from its
                    // kept answer: the route applied each order exactly once.
                    let sent = proxy.sentKeys
                    #expect(proxy.droppedKeys.count >= 4 && sent.count >= 12 + proxy.droppedKeys.count)
                    for key in proxy.droppedKeys {
                        #expect(sent.filter { $0 == key }.count >= 2, "\(key) sent again after its answer was lost")
                    }
                    #expect(Set(sent) == Set(items.map(\.id)))
                    #expect(ledger.applies.value == 12)
                }
            }
        }
    }

    @Test("A 4xx that will never succeed ends the item, not its queue", arguments: TransportKind.allCases)
    func finalFailureEndsOnlyTheItem(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            try await setting.withOutbox(kind, serving: true) { outbox in
                let updates = outbox.updates()
                let first = try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 0))
                let bad = try await outbox.enqueue(PlaceOrder(), params: ["queue": "main"])  // no position: 400
                let last = try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 2))
                let seen = await Self.read(updates) { Self.done($0).count == 2 }
                #expect(Self.done(seen) == [first.id, last.id])
                let failure = seen.first { $0.item.id == bad.id && "\($0.state)".hasPrefix("failed") }
                if case .failed(.httpStatus(let code, _))? = failure?.state {
                    #expect(code == 400)
                } else {
                    Issue.record("the bad item failed with its 400: \(String(describing: failure))")
                }
                #expect(try await setting.ledger.orders().map(\.position) == [0, 2])
            }
        }
    }

    /// `POST /faults/flaky` of the demo server: fails as its query says, then succeeds.
    struct FlakyPost: API {
        var service: ServiceID { "faults" }
        var path: String { "/faults/flaky" }
        var method: HTTPRequest.Method { .post }
        var paramEncoding: ParamEncoding { .query }
    }

    /// A 401 says the credentials or the signature did not pass this time — an expired token, or
    /// a signature the server saw twice because Linux's URLSession sent the POST again by itself
    /// after its reused connection died. The next try is authenticated and signed anew.
    @Test("A 401 does not end an item: it is sent again and lands", arguments: TransportKind.allCases)
    func unauthorizedIsSentAgain(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            let server = try await DemoServer.start()
            let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
            let engine = Engine(transport: nio ?? URLSessionTransport())
            try engine.register(
                Service(id: "faults", baseURLs: [.release: server.baseURL], connection: .init(allowsInsecureHTTP: true)))
            let outbox = try await Outbox.open(engine: engine, container: setting.container, policy: Self.quick)
            try await withCleanup({
                await outbox.close()
                try? await nio?.shutdown()
                await server.stop()
            }) {
                let updates = outbox.updates()
                let key = UUID().uuidString
                let item = try await outbox.enqueue(
                    FlakyPost(), params: ["key": .string(key), "failures": .int(2), "status": .int(401)])
                let seen = await Self.read(updates) { seen in
                    Self.done(seen) == [item.id] || seen.contains { "\($0.state)".hasPrefix("failed") }
                }
                #expect(Self.done(seen) == [item.id], "\(seen.map(\.state))")
                #expect(server.probe.count("/faults/flaky/\(key)") == 3, "two 401s, then the answer")
            }
        }
    }

    @Test("A sign-out holds the user's items, across a relaunch too; the next user's go; adopting sends the held", arguments: TransportKind.allCases)
    func signOutHolds(_ kind: TransportKind) async throws {
        try await Self.withSetting { setting in
            let keychain = TestBox<String?>("A-token")
            var mine: [OutboxItem] = []
            let signedIn = Authentication(KeychainAuthenticator(keychain: keychain, refreshes: TestBox(0)))
            try await setting.withOutbox(kind, serving: false, authentication: signedIn) { outbox in
                let updates = outbox.updates()
                for position in 0..<3 { mine.append(try await outbox.enqueue(PlaceOrder(), params: Self.order("main", position))) }
                keychain.set("B-token")
                signedIn.reset()
                let held = await Self.read(updates) { seen in seen.filter { "\($0.state)" == "held" }.count == 3 }
                #expect(Set(held.filter { "\($0.state)" == "held" }.map(\.item.id)) == Set(mine.map(\.id)))
            }
            // Relaunched as B, with the server back: A's items stay held, B's go.
            let relaunched = Authentication(KeychainAuthenticator(keychain: keychain, refreshes: TestBox(0)))
            try await setting.withOutbox(kind, serving: true, authentication: relaunched) { outbox in
                let updates = outbox.updates()
                #expect(try await outbox.held().map(\.id) == mine.map(\.id))
                let theirs = try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 10))
                _ = await Self.read(updates) { Self.done($0) == [theirs.id] }
                #expect(try await setting.ledger.orders().map(\.key) == [theirs.id], "nothing of A's was sent as B")
                // The app knows it is A again: adopted, they go.
                #expect(try await outbox.adoptHeld().map(\.id) == mine.map(\.id))
                _ = await Self.read(updates) { Self.done($0).count == 3 }
                #expect(try await setting.ledger.orders().map(\.key) == [theirs.id] + mine.map(\.id))
            }
        }
    }

    @Test("With .drop a sign-out removes the user's items, each failed with userChanged")
    func signOutDrops() async throws {
        try await Self.withSetting { setting in
            let authentication = Authentication(KeychainAuthenticator(keychain: TestBox("A-token"), refreshes: TestBox(0)))
            var policy = Self.quick
            policy.signOut = .drop
            try await setting.withOutbox(.asyncHTTPClient, serving: false, authentication: authentication, policy: policy) { outbox in
                let updates = outbox.updates()
                var mine: [OutboxItem] = []
                for position in 0..<3 { mine.append(try await outbox.enqueue(PlaceOrder(), params: Self.order("main", position))) }
                authentication.reset()
                let seen = await Self.read(updates) { seen in
                    seen.filter { if case .failed(.userChanged) = $0.state { true } else { false } }.count == 3
                }
                #expect(Set(seen.filter { if case .failed(.userChanged) = $0.state { true } else { false } }.map(\.item.id)) == Set(mine.map(\.id)))
                #expect(try await outbox.items().isEmpty)
            }
        }
    }

    @Test(
        "A stored sign-in generation no count of sign-outs makes (a damaged or edited file) is refused at open; the items stay stored",
        arguments: [Int64.max, (1 << 62) + 1, -1] as [Int64])  // past the largest a store keeps, 2⁶²
    func generationPastAnyCount(stored: Int64) async throws {
        try await Self.withSetting { setting in
            let item = try await setting.withOutbox(.asyncHTTPClient, serving: false) { outbox in
                try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 0))
            }
            let files = FileManager.default.enumerator(at: setting.folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
            let database = try #require(files.first { $0.pathExtension == "sqlite" && $0.path.contains("outbox") })
            let queue = try DatabaseQueue(path: database.path)
            try await queue.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('signin', ?)", arguments: [stored])
            }
            // At Int64.max, the next sign-out's generation stopped the process; a generation that
            // counts on from the edited one could give the next user this one's items.
            let authentication = Authentication(KeychainAuthenticator(keychain: TestBox("A-token"), refreshes: TestBox(0)))
            await #expect {
                try await setting.withOutbox(.asyncHTTPClient, serving: false, authentication: authentication) { _ in
                    authentication.reset()
                }
            } throws: { error in
                guard case OutboxError.storage(let reason) = error else { return false }
                return reason.contains("sign-in generation \(stored)")
            }
            let kept = try await queue.read { db in try String.fetchAll(db, sql: "SELECT id FROM item") }
            try queue.close()
            #expect(kept == [item.id], "the refused file keeps its items")
        }
    }

    @Test(
        "A tampered row heading its queue (a text field not UTF-8) is listed, fails, is removed; the next item is sent",
        arguments: ["path", "id"])
    func tamperedRow(column: String) async throws {
        try await Self.withSetting { setting in
            let (first, second) = try await setting.withOutbox(.asyncHTTPClient, serving: false) { outbox in
                (try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 0)),
                 try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 1)))
            }
            let files = FileManager.default.enumerator(at: setting.folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
            let database = try #require(files.first { $0.pathExtension == "sqlite" && $0.path.contains("outbox") })
            let queue = try DatabaseQueue(path: database.path)
            let row = try await queue.write { db in
                let row = try Int64.fetchOne(db, sql: "SELECT min(seq) FROM item") ?? 0
                try db.execute(sql: "UPDATE item SET \(column) = X'FF' WHERE seq = ?", arguments: [row])
                return row
            }
            try queue.close()
            // A damaged identity is reported under the row's number: the item is still listed.
            let firstID = column == "id" ? OutboxItem.unreadableID(row: row) : first.id
            // Opened offline, so that nothing is looked at before the test listens; then online.
            let server = try await setting.startServer()
            let transport = AsyncHTTPClientTransport()
            let monitor = NetworkMonitor(path: .unreachable)
            let engine = Engine(transport: transport, network: monitor)
            try engine.register(
                Service(id: "orders", baseURLs: [.release: server.baseURL], connection: .init(allowsInsecureHTTP: true)))
            let outbox = try await Outbox.open(engine: engine, container: setting.container, policy: Self.quick)
            let seen = try await withCleanup({
                await outbox.close()
                try? await transport.shutdown()
                await server.stop()
            }) {
                let updates = outbox.updates()
                let listed = try await outbox.items()
                #expect(listed.map(\.id) == [firstID, second.id], "listed by the fields that name it, until it fails")
                #expect(listed.first?.queue == first.queue)
                #expect(listed.first?.apiName == first.apiName)
                monitor.update(.wired)
                // Held behind the unreadable head, the second item would never be answered.
                let seen = await Self.read(updates) { Self.done($0).contains(second.id) }
                let left = try await outbox.items()
                #expect(left.isEmpty, "the unreadable row was removed, the next item answered")
                return seen
            }
            let failed = seen.compactMap { update -> (String, RunwayError)? in
                if case .failed(let error) = update.state { (update.item.id, error) } else { nil }
            }
            #expect(failed.map(\.0) == [firstID], "the unreadable item failed, named as it was listed: \(failed)")
            guard case .invalidRequest(let reason)? = failed.first?.1 else {
                Issue.record("expected invalidRequest, got \(failed)")
                return
            }
            #expect(reason.contains("\"\(column)\"") || reason.hasSuffix("(\(column))"), "the reason names the field: \(reason)")
            #expect(try await setting.ledger.orders().map(\.key) == [second.id], "only the readable item reached the server")
        }
    }

    @Test("Bounded and strict: full is a typed error, a file body and an unknown service are refused, nothing stored")
    func boundsAndRefusals() async throws {
        try await Self.withSetting { setting in
            var policy = Self.quick
            policy.maximumItems = 2
            policy.maximumBytes = 200
            let closed = try await setting.withOutbox(.asyncHTTPClient, serving: false, policy: policy) { outbox in
                try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 0))
                do throws(OutboxError) {
                    try await outbox.enqueue(PlaceOrder(), params: ["note": .string(String(repeating: "x", count: 300))])
                    Issue.record("an item over the byte bound was stored")
                } catch {
                    if case .full(let items, _) = error { #expect(items == 1) } else { Issue.record("\(error)") }
                }
                try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 1))
                do throws(OutboxError) {
                    try await outbox.enqueue(PlaceOrder(), params: Self.order("main", 2))
                    Issue.record("a third item was stored")
                } catch {
                    if case .full(let items, _) = error { #expect(items == 2) } else { Issue.record("\(error)") }
                }
                await #expect(throws: OutboxError.unsupportedBody) {
                    try await outbox.enqueue(PlaceOrder(), body: .file(setting.folder.appendingPathComponent("x")))
                }
                struct Elsewhere: API {
                    var service: ServiceID { "nowhere" }
                    var path: String { "/x" }
                    var method: HTTPRequest.Method { .post }
                }
                do throws(OutboxError) {
                    try await outbox.enqueue(Elsewhere())
                    Issue.record("an item for an unknown service was stored")
                } catch {
                    if case .invalidRequest = error {} else { Issue.record("\(error)") }
                }
                #expect(try await outbox.items().count == 2)
                return outbox
            }
            await #expect(throws: OutboxError.closed) { try await closed.enqueue(PlaceOrder()) }
        }
    }
}
