public import Foundation

/// Where ``IdempotencyMiddleware`` keeps each key's request fingerprint and answer: SQLite for one
/// process (``SQLiteIdempotencyStore``), PostgreSQL for several behind one address
/// (``PostgresIdempotencyStore``).
///
/// A key is claimed by the first request that brings it and held for a lease; the answer is
/// kept until it expires. A claim whose lease ran out (its process was killed mid-request) may
/// be taken by the next request with the same key and fingerprint.
public protocol IdempotencyStore: Sendable {
    /// Claims `key` for a request whose fingerprint is `fingerprint`, or says what became of an
    /// earlier claim. Answers that have expired count as never given.
    ///
    /// - parameters:
    ///   - now: Milliseconds since 1970.
    ///   - leaseUntil: Until when the claim is this request's (milliseconds since 1970).
    func claim(_ key: String, fingerprint: String, now: Int64, leaseUntil: Int64) async throws -> IdempotencyClaim

    /// Keeps `answer` as the answer to `key` until `expiry` (milliseconds since 1970).
    func complete(_ key: String, answer: StoredAnswer, expiry: Int64) async throws

    /// Forgets the claim of `key`: the request ended without an answer worth keeping (a 5xx, an
    /// error), so a repeat runs again.
    func release(_ key: String) async throws

    /// Removes up to `limit` answers that expired before `now`; returns how many.
    func sweep(now: Int64, limit: Int) async throws -> Int
}

/// What an ``IdempotencyStore`` says about a key.
public enum IdempotencyClaim: Sendable, Equatable {
    /// The key is this request's now: run it.
    case claimed
    /// Another request with the key is running.
    case running
    /// The key was used with another request.
    case mismatch
    /// The key's request ran; this is its answer.
    case answered(StoredAnswer)
}

/// An answer kept for replay: status, the header fields worth repeating, and the body (unless it
/// was larger than the middleware keeps).
public struct StoredAnswer: Sendable, Equatable, Codable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields, in order, as name and value.
    public var headers: [[String]]
    /// The body; `nil` when it was too large to keep.
    public var body: Data?

    public init(status: Int, headers: [[String]], body: Data?) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The answer as one value for a store's column.
    package func encoded() throws -> Data { try JSONEncoder().encode(self) }

    /// An answer a store kept; `nil` when the value is not one (a damaged or edited row, or a
    /// status no HTTP answer has).
    package static func decoded(_ data: Data) -> StoredAnswer? {
        guard let answer = try? JSONDecoder().decode(StoredAnswer.self, from: data), answer.hasValidStatus else { return nil }
        return answer
    }

    /// Whether ``status`` is a status an HTTP answer can carry (100–999): another stops the
    /// process that makes a response of it.
    public var hasValidStatus: Bool { (100...999).contains(status) }
}
