import Foundation
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The outbox with the network really taken away: the client runs in a network namespace whose
/// only link (a veth pair) reaches the order server; the test pulls the link's other end down and
/// puts it back up, and the client's own path monitor (rtnetlink) sees it.
@Suite("Outbox across a network that goes away", .timeLimit(.minutes(10)))
struct OutboxNetworkTests {
    @Test(
        "Orders placed with the link down wait, go when it comes back, and survive it going down mid-send: each applied once, in order",
        .enabled(if: IPRoute.isAvailable, "network namespaces need root and iproute2 (CI runs as root)"),
        arguments: ["ahc", "urlsession"])
    func linkDownAndUp(_ transport: String) async throws {
        let tag = UUID().uuidString.prefix(8).lowercased()
        let namespace = "runway-\(tag)"
        let (host, inside) = ("rwo\(tag)", "rwi\(tag)")
        let subnet = try await IPRoute.freeSubnet()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-outbox-net-\(tag)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await IPRoute.run(["netns", "add", namespace])
        var server: DemoServer?
        try await withCleanup({
            await server?.stop()
            try? await IPRoute.run(["link", "del", host])
            try? await IPRoute.run(["netns", "del", namespace])
            try? FileManager.default.removeItem(at: folder)
        }) {
            try await IPRoute.run(["link", "add", host, "type", "veth", "peer", "name", inside, "netns", namespace])
            try await IPRoute.run(["addr", "add", "\(subnet).1/30", "dev", host])
            try await IPRoute.run(["-n", namespace, "addr", "add", "\(subnet).2/30", "dev", inside])
            try await IPRoute.run(["-n", namespace, "link", "set", inside, "up"])
            // This end stays down: inside, the link has no carrier — the device is offline.
            let ledger = try SQLiteOrderLedger(url: folder.appendingPathComponent("orders.sqlite"))
            let desk = OrderDesk(ledger: ledger, keys: try SQLiteIdempotencyStore(url: folder.appendingPathComponent("keys.sqlite")))
            let started = try await DemoServer.start(demoRoutes: false, address: "\(subnet).1", orders: desk)
            server = started
            let client = [
                "netns", "exec", namespace, runwayExecutable().path, "outbox", "orders",
                "--server", "http://\(subnet).1:\(started.port)", "--container", folder.appendingPathComponent("device").path,
                "--transport", transport, "--timeout", "5000",
            ]

            // Offline: ten orders are stored and wait; nothing can reach the server.
            let first = ChildProcess("/usr/sbin/ip", client + ["--count", "10"], output: .pipe)
            try first.run()
            guard let output = first.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
            var enqueued: [String] = []
            while enqueued.count < 10 {
                let next = try await line(of: output)
                if next.isEmpty && !first.isRunning { break }
                let fields = next.split(separator: " ")
                if fields.first == "enqueued", fields.count == 4 { enqueued.append(String(fields[3])) }
            }
            #expect(enqueued.count == 10)
            #expect(try await ledger.orders().isEmpty, "no link, no order")

            // Back online: the monitor hears the carrier, the outbox sends them all.
            try await IPRoute.run(["link", "set", host, "up"])
            var lines: [String] = []
            while lines.last?.hasPrefix("{") != true {
                let next = try await line(of: output)
                if next.isEmpty && !first.isRunning { break }
                lines.append(next)
            }
            await offThePool { first.waitUntilExit() }
            #expect(first.terminationStatus == 0 && lines.last == #"{"left": 0}"#, "\(lines)")

            // Ten more, and the link goes away after the second answer, then comes back.
            let second = ChildProcess("/usr/sbin/ip", client + ["--count", "10", "--from", "100"], output: .pipe)
            try second.run()
            guard let more = second.standardOutput else { throw ChildProcess.SpawnFailure(description: "no pipe") }
            var answered = 0
            var pulled = false
            var last = ""
            while !last.hasPrefix("{") {
                last = try await line(of: more)
                if last.isEmpty && !second.isRunning { break }
                let fields = last.split(separator: " ")
                if fields.first == "enqueued", fields.count == 4 { enqueued.append(String(fields[3])) }
                if fields.first == "done" { answered += 1 }
                if answered == 2, !pulled {
                    pulled = true
                    try await IPRoute.run(["link", "set", host, "down"])
                    try await IPRoute.run(["link", "set", host, "up"])
                }
            }
            await offThePool { second.waitUntilExit() }
            #expect(second.terminationStatus == 0 && last == #"{"left": 0}"#)

            let orders = try await ledger.orders()
            print("outbox across a link pulled (\(transport)): \(enqueued.count) enqueued, \(orders.count) applied")
            #expect(orders.map(\.key).sorted() == enqueued.sorted(), "each applied once")
            for queue in ["q0", "q1"] {
                let positions = orders.filter { $0.queue == queue }.map(\.position)
                #expect(positions == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104], "\(queue) in order")
            }
        }
    }
}
