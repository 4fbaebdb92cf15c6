import Crypto
import Foundation
import HTTPTypes
@testable import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// One holder's flood is its own problem: a device (named in a signed field) or a key that
/// holds its quota of the nonce store is refused 429 with when its own room frees, while every
/// other client's signed requests are still admitted.
@Suite("Nonce quotas per key and per device", .timeLimit(.minutes(10)))
struct NonceQuotaTests {
    static let secrets = ["app": SymmetricKey(data: Data(repeating: 1, count: 32)), "partner": SymmetricKey(data: Data(repeating: 2, count: 32))]

    /// A signed `GET` signed by `keyID` at `timestamp`, naming `device` in a signed
    /// `X-Runway-Device` field when given (or in an unsigned one when `signsDevice` is false).
    static func send(
        to server: DemoServer, keyID: String, device: String? = nil, signsDevice: Bool = true, timestamp: Date
    ) async throws -> CollectorTests.Answer {
        let deviceField = SignatureVerifier<ServerRequestContext>.deviceField
        var fields = HTTPFields()
        if let device { fields[deviceField] = device }
        let secret = try #require(secrets[keyID])
        let signer = HMACSigner(keyID: keyID, secret: secret, signedHeaderFields: signsDevice ? [deviceField] : [], now: { timestamp })
        return try await NonceLimitTests.send(to: server, signer: signer, fields: fields)
    }

    /// A server whose verifier remembers nonces in `store`, its clock at `now`.
    static func withServer(_ store: any NonceStore, now: Date, _ body: (DemoServer) async throws -> Void) async throws {
        let verifier = SignatureVerifier<ServerRequestContext>(
            keys: secrets.mapValues { [$0] }, nonces: store, now: { now })
        let server = try await DemoServer.start(signatureVerifier: verifier)
        try await withCleanup({ await server.stop() }) { try await body(server) }
    }

    @Test("A device that floods with timestamps 60 s ahead holds its quota, then gets 429; other devices and other keys still pass")
    func deviceFloodIsItsOwn() async throws {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        let store = MemoryNonceStore(capacity: 100, quota: NonceQuota(perDevice: 5))
        try await Self.withServer(store, now: now) { server in
            // Timestamps a minute ahead: each nonce is kept the longest the window allows.
            for _ in 0..<5 {
                #expect(try await Self.send(to: server, keyID: "app", device: "flooder", timestamp: now + 60).status == 200)
            }
            let refused = try await Self.send(to: server, keyID: "app", device: "flooder", timestamp: now + 60)
            #expect(refused.status == 429)
            #expect(refused.reason == "nonce_quota_exceeded")
            #expect(refused.json?["level"]?.stringValue == "device")
            // Its earliest nonce expires when its timestamp leaves the window: 60 + 240 s from now.
            #expect(refused.retryAfter == "300")
            #expect(try await Self.send(to: server, keyID: "app", device: "someone", timestamp: now).status == 200)
            #expect(try await Self.send(to: server, keyID: "partner", device: "flooder", timestamp: now).status == 200)
            #expect(try await Self.send(to: server, keyID: "app", timestamp: now).status == 200, "no device: the key's quota only")
            #expect(store.count == 8)
        }
    }

    @Test("An unsigned device field is not believed: it cannot dodge a quota by naming a new device, nor charge another's")
    func unsignedDeviceIsIgnored() async throws {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        let store = MemoryNonceStore(capacity: 100, quota: NonceQuota(perKey: 3, perDevice: 2))
        try await Self.withServer(store, now: now) { server in
            for index in 0..<3 {
                let answer = try await Self.send(to: server, keyID: "app", device: "d\(index)", signsDevice: false, timestamp: now)
                #expect(answer.status == 200)
            }
            let over = try await Self.send(to: server, keyID: "app", device: "d9", signsDevice: false, timestamp: now)
            #expect(over.status == 429 && over.json?["level"]?.stringValue == "key")
            #expect(try await Self.send(to: server, keyID: "partner", timestamp: now).status == 200)
        }
    }

    @Test("A quota frees as the holder's own nonces expire; a replay within the quota is still a replay")
    func quotaFreesWithExpiry() {
        let store = MemoryNonceStore(capacity: 100, quota: NonceQuota(perDevice: 2))
        let holder = NonceHolder(keyID: "app", device: "d")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(store.record("a", holder: holder, expiry: now + 10, now: now) == .fresh)
        #expect(store.record("b", holder: holder, expiry: now + 20, now: now) == .fresh)
        #expect(store.record("c", holder: holder, expiry: now + 30, now: now) == .overQuota(.device, roomAt: now + 10))
        #expect(store.record("a", holder: holder, expiry: now + 30, now: now + 5) == .replayed)
        #expect(store.record("c", holder: holder, expiry: now + 30, now: now + 10) == .fresh, "a expired: room for one")
        #expect(store.record("d", holder: holder, expiry: now + 30, now: now + 10) == .overQuota(.device, roomAt: now + 20))
        #expect(store.count == 2)
    }

    @Test("On PostgreSQL: one device's flood is refused 429 across two processes' stores while another device is admitted; a full store sweeps once when room comes, however many requests arrive meanwhile")
    func postgres() async throws {
        // One cluster for both parts: each cluster started costs the machine the CPU of initdb.
        try await PostgresCluster.with { cluster in
            let first = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            let second = try await PostgresCollectorDatabase.connect(cluster.configuration, logger: PostgresCollectorTests.quiet)
            try await withCleanup({
                await first.close()
                await second.close()
            }) { () async throws in
                let quota = NonceQuota(perDevice: 3)
                let storeA = PostgresNonceStore(database: first, capacity: 100, quota: quota)
                let storeB = PostgresNonceStore(database: second, capacity: 100, quota: quota)
                let now = Date(timeIntervalSince1970: 1_800_000_000)
                let flooder = NonceHolder(keyID: "app", device: "flooder")
                #expect(try await storeA.record("a", holder: flooder, expiry: now + 100, now: now) == .fresh)
                #expect(try await storeB.record("b", holder: flooder, expiry: now + 200, now: now) == .fresh)
                #expect(try await storeA.record("c", holder: flooder, expiry: now + 300, now: now) == .fresh)
                #expect(try await storeB.record("d", holder: flooder, expiry: now + 300, now: now) == .overQuota(.device, roomAt: now + 100))
                #expect(try await storeB.record("a", holder: flooder, expiry: now + 300, now: now) == .replayed)
                #expect(try await storeB.record("e", holder: NonceHolder(keyID: "app", device: "other"), expiry: now + 300, now: now) == .fresh)
                #expect(try await storeA.record("d", holder: flooder, expiry: now + 300, now: now + 100) == .fresh, "a expired")
                #expect(storeA.fill?.capacity == 100)

                // Later, when every row above has expired: a store of 5, swept only when needed.
                let later = now + 10_000
                let store = PostgresNonceStore(database: first, capacity: 5, quota: NonceQuota(), sweepEvery: 1_000_000)
                for index in 0..<5 {
                    #expect(try await store.record("n\(index)", expiry: later + 10, now: later) == .fresh)
                }
                #expect(store.sweeps == 1, "the first recording sweeps")
                #expect(try await store.record("late", expiry: later + 10, now: later + 5) == .full(roomAt: later + 10))
                #expect(store.sweeps == 1, "full, and no room before the earliest expiry: no query")
                // Every nonce has expired: 40 requests at once find the store full by its count.
                let outcomes = try await withThrowingTaskGroup(of: NonceRecording.self) { group in
                    for index in 0..<40 {
                        group.addTask { try await store.record("m\(index)", expiry: later + 100, now: later + 20) }
                    }
                    var outcomes: [NonceRecording] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                #expect(store.sweeps == 2, "one sweep for all 40")
                #expect(outcomes.filter { $0 == .fresh }.count == 5)
                #expect(outcomes.filter { if case .full = $0 { true } else { false } }.count == 35)
            }
        }
    }
}
