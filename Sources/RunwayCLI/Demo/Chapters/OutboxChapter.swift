import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport

extension DemoChapter {
    /// Five orders placed by an app process while the order server is away; the app is killed
    /// (SIGKILL) and launched again once the server is back: each order applied once, in order,
    /// by the server's own count (seed 001: defer and batch, survive a network that comes and
    /// goes).
    static let outbox = DemoChapter("outbox", "Orders placed offline, applied once (durable outbox, Idempotency-Key)") { context, log in
        let folder = context.scratch.appendingPathComponent("order-server", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ledger = try SQLiteOrderLedger(url: folder.appendingPathComponent("orders.sqlite"))
        let desk = OrderDesk(ledger: ledger, keys: try SQLiteIdempotencyStore(url: folder.appendingPathComponent("keys.sqlite")))
        // The server is away: the app's address for it is a port held bound and never listening,
        // so its connections are refused and no server started meanwhile (a test's, beside the
        // demo) can take the port and answer in its place.
        let away = try LoopbackSocket()
        defer { away.close() }
        // The app: `runway outbox orders` in a process of its own (over the demo's transport), its
        // outbox in its own container. Its requests are its own: the demo's wire count omits them.
        let transport = context.wire.base is URLSessionTransport ? "urlsession" : "ahc"
        let device = context.scratch.appendingPathComponent("app-device").path
        func app(serverPort: Int) -> [String] {
            [
                "outbox", "orders", "--server", "http://127.0.0.1:\(serverPort)", "--container", device, "--queues", "1",
                "--transport", transport,
            ]
        }
        let placed = try await AppProcess.start(app(serverPort: away.port) + ["--count", "5"])
        var keys: [String] = []
        while keys.count < 5, let line = await placed.nextLine() {
            let fields = line.split(separator: " ")
            if fields.first == "enqueued", fields.count == 4 { keys.append(String(fields[3])) }
        }
        await placed.kill()
        log.say("5 orders placed with the server away, each on disk before enqueue returned; the app is killed (SIGKILL)")

        // Back at an address of its own. The outbox keeps each order's path, not its URL, so the
        // relaunched app sends them wherever its service now points.
        let server = try await DemoServer.start(demoRoutes: false, orders: desk)
        let relaunched = try await AppProcess.start(app(serverPort: server.port))
        var last = ""
        while let line = await relaunched.nextLine() { last = line }
        let status = await relaunched.exitStatus()
        let orders = try await ledger.orders()
        await server.stop()
        log.say(
            "server back, app launched again → it sent what the killed one left, each with its Idempotency-Key; "
                + "the server applied \(orders.count): positions \(orders.map { String($0.position) }.joined(separator: ", "))")
        log.figure("applied", .int(orders.count))
        log.figure("positions", .array(orders.map { .int(Int($0.position)) }))
        try log.require(
            orders.map(\.key) == keys && orders.map(\.position) == [0, 1, 2, 3, 4] && status == 0 && last == #"{"left": 0}"#,
            "expected the 5 orders applied once each, in the order placed, by the relaunched app")
    }
}

/// `runway` itself in a child process — the demo's app that is killed and launched again — with
/// its output read line by line off the main actor.
private final class AppProcess: Sendable {
    let process: Process
    let reader: FileHandle

    private init(process: Process, reader: FileHandle) {
        self.process = process
        self.reader = reader
    }

    static func start(_ arguments: [String]) async throws -> AppProcess {
        let process = Process()
        #if canImport(Darwin)
        process.executableURL = Bundle.main.executableURL
        #else
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #endif
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return AppProcess(process: process, reader: pipe.fileHandleForReading)
    }

    /// The next line, or `nil` at the end of the output.
    @concurrent
    func nextLine() async -> String? {
        var bytes = Data()
        while true {
            // A read error ends the output as its end does (Foundation's readData(ofLength:) traps on one).
            guard let byte = (try? reader.read(upToCount: 1)) ?? nil, !byte.isEmpty else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if byte == Data([0x0A]) { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    @concurrent
    func kill() async {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @concurrent
    func exitStatus() async -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}
