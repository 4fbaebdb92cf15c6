import Foundation
public import Hummingbird
import NIOConcurrencyHelpers
import Runway

/// The server half of `OperationLog`: a route that accepts batches of events, checks
/// them, and stores each event once.
///
/// `POST /oplog/batches` takes gzip-compressed JSON (`Content-Encoding: gzip`). Both the
/// compressed body and what it inflates to are limited, so a small body that inflates to
/// gigabytes is refused with 413 after at most the limit was produced. Every event is checked
/// before anything is stored; a refused batch stores nothing. A batch is stored in one
/// transaction, by event id, so a batch sent again answers 200 with every event a duplicate.
///
/// | status | reason | when |
/// |---|---|---|
/// | 200 | — | stored: `{"new": n, "duplicates": d}` |
/// | 415 | `unsupported_encoding` | `Content-Encoding` is not `gzip` |
/// | 413 | `body_too_large` | the compressed body exceeds ``Limits/maximumBodySize`` |
/// | 413 | `inflated_too_large` | it inflates past ``Limits/maximumInflatedSize`` |
/// | 413 | `too_many_events` | more than ``Limits/maximumEvents`` events |
/// | 400 | `not_gzip` | the body is not gzip data |
/// | 400 | `malformed_json` | the inflated body is not JSON |
/// | 400 | `missing_events` | no non-empty `events` array |
/// | 400 | `invalid_event` | an event lacks a valid field (`index` and `field` name the first) |
/// | 503 | `store_unavailable` | the store failed (`Retry-After: 1`); nothing was stored |
///
/// `GET /oplog/stats` answers what the store holds. Put the routes behind a
/// ``SignatureVerifier`` (``add(to:verifier:)``) so that only the app's own clients can write.
public final class OperationLogCollector: Sendable {
    /// Limits on one batch.
    public struct Limits: Sendable {
        /// The largest compressed body. Default 1 MB.
        public var maximumBodySize = 1 << 20
        /// The most bytes the body may inflate to. Default 8 MB.
        public var maximumInflatedSize = 8 << 20
        /// The most events in one batch. Default 1,000.
        public var maximumEvents = 1_000
        /// The largest payload of one event, encoded. Default 32 KB.
        public var maximumPayloadSize = 32 * 1024

        /// The defaults.
        public init() {}
    }

    /// Why a batch was refused: the `reason` of the answer.
    public enum Reason: String, Sendable {
        case unsupportedEncoding = "unsupported_encoding"
        case bodyTooLarge = "body_too_large"
        case inflatedTooLarge = "inflated_too_large"
        case tooManyEvents = "too_many_events"
        case notGzip = "not_gzip"
        case malformedJSON = "malformed_json"
        case missingEvents = "missing_events"
        case invalidEvent = "invalid_event"
        case storeUnavailable = "store_unavailable"
        case injectedFault = "injected_fault"
    }

    /// A refusal a test asks the collector to make, before anything is stored.
    public enum InjectedFault: Sendable, Hashable {
        /// 500 `injected_fault`.
        case serverError
        /// 429 `injected_fault` with `Retry-After` in seconds.
        case tooManyRequests(retryAfter: Int)
    }

    /// Where events are kept.
    public let store: any OperationLogStore
    /// The limits in force.
    public let limits: Limits
    private let fault: (@Sendable (Int) -> InjectedFault?)?
    private let batches = NIOLockedValueBox(0)

    /// Creates a collector over `store`.
    ///
    /// - parameters:
    ///   - store: Where batches are kept: SQLite or PostgreSQL.
    ///   - limits: Sizes and counts a batch may not exceed.
    ///   - fault: Given the number of each batch received (1 for the first), the refusal to
    ///     answer instead of storing it, if any: for tests and the demo of an unreliable
    ///     collector.
    public init(
        store: any OperationLogStore, limits: Limits = Limits(), fault: (@Sendable (Int) -> InjectedFault?)? = nil
    ) {
        self.store = store
        self.limits = limits
        self.fault = fault
    }

    /// Adds `POST /oplog/batches` and `GET /oplog/stats` to `router`, behind `verifier` when given.
    public func add(to router: Router<BasicRequestContext>, verifier: SignatureVerifier<BasicRequestContext>? = nil) {
        let group = verifier.map { router.group("/oplog").add(middleware: $0) } ?? router.group("/oplog")
        group.post("batches") { request, _ in try await self.accept(request) }
        group.get("stats") { _, _ in await self.stats() }
    }

    func accept(_ request: Request) async throws -> Response {
        let number = batches.withLockedValue { count -> Int in
            count += 1
            return count
        }
        guard request.headers[.contentEncoding]?.lowercased() == "gzip" else {
            return Self.refuse(.unsupportedEncoding, status: .unsupportedMediaType)
        }
        let compressed: ByteBuffer
        do {
            compressed = try await request.body.collect(upTo: limits.maximumBodySize)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            return Self.refuse(.bodyTooLarge, status: .contentTooLarge)
        }
        // Other errors (the verifier's refusal of a body that does not match its signed hash)
        // answer as they were thrown.
        let events: [CollectedEvent]
        switch parse(Data(buffer: compressed)) {
        case .success(let parsed): events = parsed
        case .failure(let refusal): return refusal.response
        }
        switch fault?(number) {
        case .serverError?:
            return Self.refuse(.injectedFault, status: .internalServerError)
        case .tooManyRequests(let seconds)?:
            var response = Self.refuse(.injectedFault, status: .tooManyRequests)
            response.headers[.retryAfter] = "\(seconds)"
            return response
        case nil:
            break
        }
        do {
            let stored = try await store.store(events)
            return JSONResponse.make(["new": stored.new, "duplicates": stored.duplicates])
        } catch {
            var response = Self.refuse(.storeUnavailable, status: .serviceUnavailable)
            response.headers[.retryAfter] = "1"
            return response
        }
    }

    struct Refusal: Error {
        var response: Response
    }

    /// The batch's events, each checked; or the answer refusing the batch.
    func parse(_ compressed: Data) -> Result<[CollectedEvent], Refusal> {
        let inflated: Data
        do {
            inflated = try Gzip.decompress(compressed, limit: limits.maximumInflatedSize)
        } catch .tooLarge {
            return .failure(Refusal(response: Self.refuse(.inflatedTooLarge, status: .contentTooLarge)))
        } catch {
            return .failure(Refusal(response: Self.refuse(.notGzip, status: .badRequest)))
        }
        let json: JSON
        do {
            json = try JSON(parsing: inflated)
        } catch {
            return .failure(Refusal(response: Self.refuse(.malformedJSON, status: .badRequest)))
        }
        guard let list = json["events"]?.arrayValue, !list.isEmpty else {
            return .failure(Refusal(response: Self.refuse(.missingEvents, status: .badRequest)))
        }
        guard list.count <= limits.maximumEvents else {
            return .failure(
                Refusal(
                    response: Self.refuse(
                        .tooManyEvents, status: .contentTooLarge, detail: ["limit": "\(limits.maximumEvents)"])))
        }
        var events: [CollectedEvent] = []
        events.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            switch Self.event(item, maximumPayloadSize: limits.maximumPayloadSize) {
            case .success(let event): events.append(event)
            case .failure(let field):
                return .failure(
                    Refusal(
                        response: Self.refuse(
                            .invalidEvent, status: .badRequest, detail: ["index": "\(index)", "field": field.name])))
            }
        }
        return .success(events)
    }

    struct BadField: Error {
        var name: String
    }

    static func event(_ item: JSON, maximumPayloadSize: Int) -> Result<CollectedEvent, BadField> {
        guard case .object = item else { return .failure(BadField(name: "event")) }
        guard let id = item["id"]?.stringValue, isValidID(id) else { return .failure(BadField(name: "id")) }
        guard let name = item["name"]?.stringValue, !name.isEmpty, name.utf8.count <= OperationEvent.maximumNameLength
        else { return .failure(BadField(name: "name")) }
        guard let time = item["time"]?.intValue, time >= 0 else { return .failure(BadField(name: "time")) }
        guard let payload = item["payload"], let encoded = try? payload.encoded(), encoded.count <= maximumPayloadSize
        else { return .failure(BadField(name: "payload")) }
        return .success(CollectedEvent(id: id, name: name, timeMilliseconds: Int64(time), payload: encoded))
    }

    /// 1 to 64 letters, digits, `-` or `_`: a UUID or ULID fits, an SQL fragment does not.
    static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_")
        }
    }

    func stats() async -> Response {
        do {
            let summary = try await store.summary()
            return JSONResponse.make([
                "events": summary.events,
                "byName": summary.byName.map { ["name": $0.name, "count": $0.count] as [String: Any] },
            ])
        } catch {
            return Self.refuse(.storeUnavailable, status: .serviceUnavailable)
        }
    }

    static func refuse(_ reason: Reason, status: HTTPResponse.Status, detail: [String: String] = [:]) -> Response {
        var object: [String: Any] = ["code": Int(status.code), "reason": reason.rawValue]
        for (key, value) in detail { object[key] = value }
        return JSONResponse.make(object, status: status)
    }
}
