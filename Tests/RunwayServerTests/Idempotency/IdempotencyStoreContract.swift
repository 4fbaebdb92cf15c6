import Foundation
import RunwayServer
import RunwayTestSupport
import Testing

/// What every ``IdempotencyStore`` must do, on logical time: run once against SQLite and once
/// against PostgreSQL.
enum IdempotencyStoreContract {
    static func check(_ store: any IdempotencyStore) async throws {
        let answer = StoredAnswer(status: 201, headers: [["content-type", "application/json"]], body: Data("{\"n\":1}".utf8))
        // The first claim runs; a second while it runs is told so; another request is a mismatch.
        #expect(try await store.claim("k1", fingerprint: "f", now: 1_000, leaseUntil: 2_000) == .claimed)
        #expect(try await store.claim("k1", fingerprint: "f", now: 1_500, leaseUntil: 2_500) == .running)
        #expect(try await store.claim("k1", fingerprint: "other", now: 1_500, leaseUntil: 2_500) == .mismatch)
        // Answered: a repeat gets the answer until it expires.
        try await store.complete("k1", answer: answer, expiry: 10_000)
        #expect(try await store.claim("k1", fingerprint: "f", now: 9_999, leaseUntil: 10_999) == .answered(answer))
        #expect(try await store.claim("k1", fingerprint: "other", now: 9_999, leaseUntil: 10_999) == .mismatch)
        #expect(try await store.claim("k1", fingerprint: "f", now: 10_000, leaseUntil: 11_000) == .claimed)
        // A claim whose process died: the same request takes it after the lease, another never.
        #expect(try await store.claim("k2", fingerprint: "f", now: 1_000, leaseUntil: 2_000) == .claimed)
        #expect(try await store.claim("k2", fingerprint: "other", now: 3_000, leaseUntil: 4_000) == .mismatch)
        #expect(try await store.claim("k2", fingerprint: "f", now: 3_000, leaseUntil: 4_000) == .claimed)
        // Released (a 5xx): a repeat runs again.
        try await store.release("k2")
        #expect(try await store.claim("k2", fingerprint: "f", now: 3_100, leaseUntil: 4_100) == .claimed)
        // Expired answers are swept, up to the limit; live ones stay.
        for index in 0..<5 {
            #expect(try await store.claim("old-\(index)", fingerprint: "f", now: 1_000, leaseUntil: 2_000) == .claimed)
            try await store.complete("old-\(index)", answer: answer, expiry: 5_000)
        }
        #expect(try await store.sweep(now: 6_000, limit: 3) == 3)
        #expect(try await store.sweep(now: 6_000, limit: 100) == 2)
        #expect(try await store.claim("k1", fingerprint: "f", now: 6_000, leaseUntil: 7_000) == .running)
    }
}

@Suite("Idempotency stores", .timeLimit(.minutes(10)))
struct IdempotencyStoreTests {
    @Test("SQLite keeps the contract: claim, running, mismatch, answered, expiry, stale lease, release, sweep")
    func sqlite() async throws {
        // A folder of its own: the store's `-wal` and `-shm` go with it.
        let folder = try ScratchFolder("keys")
        defer { folder.remove() }
        try await IdempotencyStoreContract.check(try SQLiteIdempotencyStore(url: folder.file("keys.sqlite")))
    }
}
