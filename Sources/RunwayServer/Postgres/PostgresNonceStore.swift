import Crypto
public import Foundation
import Runway
import NIOConcurrencyHelpers

/// A ``NonceStore`` several verifier processes share through PostgreSQL: one replay window for
/// all of them. A nonce is fresh when no unexpired row holds it; the check and the claim are one
/// statement, so two processes can never both accept the same nonce. Nonces are kept as their
/// SHA-256 (the verifier's key holds a NUL byte, which PostgreSQL text cannot).
public final class PostgresNonceStore: NonceStore {
    private let database: PostgresCollectorDatabase
    private let sweepEvery: Int
    private let calls = NIOLockedValueBox(0)

    /// A store over `database`; expired nonces are deleted every `sweepEvery` recordings.
    public init(database: PostgresCollectorDatabase, sweepEvery: Int = 1_000) {
        self.database = database
        self.sweepEvery = max(sweepEvery, 1)
    }

    public func record(_ nonce: String, expiry: Date, now: Date) async throws -> NonceRecording {
        let expiryMilliseconds = Int64((expiry.timeIntervalSince1970 * 1000).rounded(.up))
        let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let call = calls.withLockedValue { count -> Int in
            count += 1
            return count
        }
        if call % sweepEvery == 0 {
            try await database.client.query(
                "DELETE FROM signature_nonce WHERE expiry_ms <= \(nowMilliseconds)", logger: database.logger)
        }
        let key = RequestSignature.hex(SHA256.hash(data: Data(nonce.utf8)))
        let rows = try await database.client.query(
            """
            INSERT INTO signature_nonce (nonce, expiry_ms) VALUES (\(key), \(expiryMilliseconds))
            ON CONFLICT (nonce) DO UPDATE SET expiry_ms = EXCLUDED.expiry_ms
            WHERE signature_nonce.expiry_ms <= \(nowMilliseconds)
            RETURNING 1
            """, logger: database.logger)
        for try await _ in rows { return .fresh }
        return .replayed
    }
}
