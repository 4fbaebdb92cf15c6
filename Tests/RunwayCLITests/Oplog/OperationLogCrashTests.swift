import Crypto
import Foundation
import Hummingbird
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// `kill -9` against the operation log: a child process records and uploads without end and is
/// killed at random moments, while the collector refuses some batches; every event whose commit
/// was acknowledged must reach the collector, once.
///
/// The time limit only stops a hung run; beside eight CPU-bound processes a whole run takes
/// about two minutes.
@Suite("Operation log crashes", .timeLimit(.minutes(15)))
struct OperationLogCrashTests {
    /// Reads `committed <id>` lines until `killAfter` were seen, kills the child
    /// (``readUntilKilled(_:_:killAfter:onLine:)``), and returns every id it printed.
    static func runUntilKilled(_ process: ChildProcess, _ reader: FileHandle, killAfter: Int) async throws -> [String] {
        let ids = TestBox<[String]>([])
        try await readUntilKilled(process, reader, killAfter: killAfter) { line in
            guard line.hasPrefix("committed ") else { return false }
            ids.mutate { $0.append(String(line.dropFirst("committed ".count))) }
            return true
        }
        return ids.value
    }

    @Test("Killed 20 times mid-work, with a collector that fails now and then: 0 lost, 0 duplicates")
    func killNineLosesNothing() async throws {
        let secret = SymmetricKey(size: .bits256)
        let hex = secret.withUnsafeBytes { RequestSignature.hex(Array($0)) }
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["oplog": [secret]])
        // Every fifth batch is refused with a 500: the client must keep and resend it.
        try await withCollector(verifier: verifier, fault: { $0 % 5 == 0 ? .serverError : nil }) { fixture in
            let device = fixture.folder.appendingPathComponent("child").path
            let arguments = ["oplog", "soak", "--server", fixture.server.baseURL, "--container", device, "--key-id", "oplog", "--secret", hex]
            var acknowledged: [String] = []
            for _ in 0..<20 {
                let (process, reader) = try startNiced(arguments, niceness: 5)
                acknowledged += try await Self.runUntilKilled(process, reader, killAfter: Int.random(in: 1...70))
                #expect(process.terminationReason == .uncaughtSignal, "the child was killed, not finished")
            }
            let drained = try await runRunway(arguments + ["--drain"])
            let stored = try await fixture.store.allEventIDs()
            let storedSet = Set(stored)
            let lost = Set(acknowledged).subtracting(storedSet)
            print(
                "oplog kill -9: \(acknowledged.count) acknowledged events over 20 kills; "
                    + "collector holds \(stored.count) (\(storedSet.count) distinct); lost \(lost.count)")
            #expect(acknowledged.count >= 20)
            #expect(Set(acknowledged).count == acknowledged.count, "ids are unique")
            #expect(lost.isEmpty, "every acknowledged event reached the collector")
            #expect(stored.count == storedSet.count, "each stored once")
            #expect(drained["pending"] as? Int == 0 && drained["inFlight"] as? Int == 0)
            #expect(drained["dropped"] as? Int == 0)
        }
    }
}
