import Foundation
public import Hummingbird
import NIOConcurrencyHelpers
import Runway
import Tracing

/// The server half of `OperationLog`: a route that accepts batches of events, checks
/// them, and stores each event once.
///
/// `POST /oplog/batches` takes gzip-compressed JSON (`Content-Encoding: gzip`). Both the
/// compressed body and what it inflates to are limited, so a small body that inflates to
/// gigabytes is refused with 413 after at most the limit was produced. The events and the JSON
/// values are counted while the batch is parsed, and parsing stops at the first one past its
/// limit: a few kilobytes that inflate to a million tiny objects cost what the limits allow, not
/// what the input asks for. A batch whose shape is
/// wrong is refused whole; within a well-formed batch each event is checked against what every
/// store can hold (an id, a name without NUL, a time from 1970 on, a payload within its size
/// and without NUL) and **refused one by one**: the good events are stored, in one
/// transaction, by event id, and the answer lists each refused event's index, field and
/// reason, so that one bad event never holds back the events behind it on a device. A batch
/// sent again answers 200 with every event a duplicate.
///
/// | status | reason | when |
/// |---|---|---|
/// | 200 | — | stored: `{"new": n, "duplicates": d, "refused": [{"index": i, "field": f, "reason": r}, …]}` |
/// | 415 | `unsupported_encoding` | `Content-Encoding` is not `gzip` |
/// | 413 | `body_too_large` | the compressed body exceeds ``Limits/maximumBodySize`` (`limit` in bytes) |
/// | 413 | `inflated_too_large` | it inflates past ``Limits/maximumInflatedSize`` (`limit` in bytes) |
/// | 413 | `too_many_events` | more than ``Limits/maximumEvents`` events (`limit`) |
/// | 413 | `too_many_values` | more than ``Limits/maximumValues`` JSON values in the batch (`limit`) |
/// | 400 | `not_gzip` | the body is not gzip data |
/// | 400 | `malformed_json` | the inflated body is not JSON |
/// | 400 | `missing_events` | no non-empty `events` array |
/// | 503 | `store_unavailable` | the store is unreachable or failed (`Retry-After: 1`); nothing was stored |
///
/// A value the store itself refuses although the checks let it through
/// (``OperationLogStoreError``) is never a 503: the batch's events are then stored one by one
/// and the ones refused are listed with the reason `store_refused`.
///
/// A batch may say when the device sent it (`"sent"`, milliseconds since 1970 on the device's
/// clock); each of its events is stored with the difference to the collector's clock
/// (``CollectedEvent/clockOffsetMilliseconds``), so a device with a wrong clock can be corrected.
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
        /// The most JSON values in one batch (each object, array, string, number, `true`,
        /// `false` and `null` counts one), counted while parsing: what bounds the memory and
        /// the time a batch can cost before it is refused. Default 100,000 — 100 per event of
        /// the largest batch; keep it above `maximumPayloadSize / 2 + 8`, the most one event
        /// can hold, so that a batch of one event always parses (a client halves a batch
        /// refused with 413).
        public var maximumValues = 100_000
        /// The most batches inflated, parsed and stored at once. Each can cost up to the memory
        /// `maximumInflatedSize` and `maximumValues` allow (about 50 MB at the defaults) and tens
        /// of milliseconds of CPU; a batch beyond the cap is answered 503 `busy` with a
        /// `Retry-After` of how long batches take here, so a client's back-off brings it back.
        /// Default: two per processor.
        public var maximumConcurrentBatches = 2 * ProcessInfo.processInfo.activeProcessorCount
        /// The most names `GET /oplog/stats` answers per page (`?limit=` asks for fewer).
        /// Default 100.
        public var maximumStatsPage = 100

        /// The defaults.
        public init() {}
    }

    /// Why a batch was refused: the `reason` of the answer.
    public enum Reason: String, Sendable, CaseIterable {
        case unsupportedEncoding = "unsupported_encoding"
        case bodyTooLarge = "body_too_large"
        case inflatedTooLarge = "inflated_too_large"
        case tooManyEvents = "too_many_events"
        case tooManyValues = "too_many_values"
        case notGzip = "not_gzip"
        case malformedJSON = "malformed_json"
        case missingEvents = "missing_events"
        case storeUnavailable = "store_unavailable"
        case busy = "busy"
    }

    /// Where events are kept.
    public let store: any OperationLogStore
    /// The limits in force.
    public let limits: Limits
    private let metrics: ServerMetrics?
    private let work = NIOLockedValueBox(Work())

    /// Batches being worked on, and how long one takes (a moving average), for the cap.
    private struct Work {
        var running = 0
        var averageSeconds = 0.05
    }

    /// Creates a collector over `store`.
    ///
    /// - parameters:
    ///   - store: Where batches are kept: SQLite or PostgreSQL.
    ///   - limits: Sizes and counts a batch may not exceed.
    ///   - metrics: Counts batches by outcome, events stored, duplicated and refused by reason,
    ///     and events per batch (``ServerMetrics``); `nil` counts nothing.
    public init(
        store: any OperationLogStore, limits: Limits = Limits(), metrics: ServerMetrics? = nil
    ) {
        self.metrics = metrics
        self.store = store
        self.limits = limits
    }

    /// Adds `POST /oplog/batches` and `GET /oplog/stats` to `router`, behind `verifier` when given.
    public func add<Context: RequestContext>(to router: Router<Context>, verifier: SignatureVerifier<Context>? = nil) {
        addRoutes(to: verifier.map { router.group("/oplog").add(middleware: $0) } ?? router.group("/oplog"))
    }

    /// Adds `POST batches` and `GET stats` to `group` (which is at `/oplog` for clients that
    /// use Runway's `OperationLog`), behind whatever middleware the group has.
    public func addRoutes<Context: RequestContext>(to group: RouterGroup<Context>) {
        group.post("batches") { request, _ in try await self.accept(request) }
        group.get("stats") { request, _ in
            let query = request.uri.queryParameters
            return await self.stats(limit: query["limit"].flatMap { Int($0) }, offset: query["offset"].flatMap { Int($0) })
        }
    }

    /// Adds `GET /ready` to `router`: 200 while the store answers a query within `timeout`,
    /// 503 `store_unavailable` when it does not — what an orchestrator asks before sending
    /// traffic. A database that is down often does not refuse but keeps the query waiting for a
    /// connection: the answer does not wait past `timeout` for it.
    public func addReadiness<Context: RequestContext>(to router: Router<Context>, timeout: Duration = .seconds(2)) {
        router.get("/ready") { _, _ -> Response in
            do {
                try await TimeBound.run(within: timeout) { try await self.store.checkReachable() }
                var response = JSONResponse.make(["status": "ready"])
                response.headers[.cacheControl] = "no-store"
                return response
            } catch {
                var response = Self.refuse(.storeUnavailable, status: .serviceUnavailable)
                response.headers[.cacheControl] = "no-store"
                return response
            }
        }
    }

    func accept(_ request: Request) async throws -> Response {
        let received = Int64(Date().timeIntervalSince1970 * 1000)
        guard request.headers[.contentEncoding]?.lowercased() == "gzip" else {
            return refused(.unsupportedEncoding, status: .unsupportedMediaType)
        }
        let compressed: ByteBuffer
        do {
            compressed = try await request.body.collect(upTo: limits.maximumBodySize)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            return refused(.bodyTooLarge, status: .contentTooLarge, detail: ["limit": limits.maximumBodySize])
        }
        // Other errors (the verifier's refusal of a body that does not match its signed hash)
        // answer as they were thrown.
        // The body is bounded and read; what costs memory and CPU — inflating, parsing,
        // storing — runs for at most `maximumConcurrentBatches` at once.
        let admitted = work.withLockedValue { work -> Bool in
            guard work.running < limits.maximumConcurrentBatches else { return false }
            work.running += 1
            return true
        }
        guard admitted else {
            let seconds = work.withLockedValue { $0.averageSeconds }
            var response = refused(.busy, status: .serviceUnavailable, detail: ["limit": limits.maximumConcurrentBatches])
            response.headers[.retryAfter] = String(Int(min(max(seconds.rounded(.up), 1), 60)))
            return response
        }
        let started = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            work.withLockedValue { work in
                work.running -= 1
                work.averageSeconds = work.averageSeconds * 0.9 + seconds * 0.1
            }
        }
        let batch: ParsedBatch
        switch parse(Data(buffer: compressed), receivedAt: received) {
        case .success(let parsed): batch = parsed
        case .failure(let refusal):
            metrics?.batchRefused(refusal.reason.rawValue)
            return refusal.response
        }
        do {
            // The insert is a span of its own: where a tap in the app ends up.
            let tracer = InstrumentationSystem.tracer
            let insert = tracer is NoOpTracer ? nil : tracer.startAnySpan("collector insert", ofKind: .client)
            insert?.attributes["runway.collector.events"] = batch.events.count
            insert?.attributes["runway.collector.store"] = String(describing: type(of: store))
            let (stored, refusedByStore): (StoredBatch, [RefusedEvent])
            do {
                (stored, refusedByStore) = try await store(batch.events)
            } catch {
                insert?.setStatus(SpanStatus(code: .error))
                insert?.end()
                throw error
            }
            insert?.attributes["runway.collector.new"] = stored.new
            insert?.attributes["runway.collector.duplicates"] = stored.duplicates
            insert?.end()
            let refused = (batch.refused + refusedByStore).sorted { $0.index < $1.index }
            metrics?.batchAccepted(
                events: batch.events.count + batch.refused.count, stored: stored.new, duplicates: stored.duplicates,
                refusedReasons: refused.map(\.reason))
            return JSONResponse.make([
                "new": stored.new, "duplicates": stored.duplicates,
                "refused": refused.map { ["index": $0.index, "field": $0.field, "reason": $0.reason] as [String: Any] },
            ])
        } catch {
            var response = refused(.storeUnavailable, status: .serviceUnavailable)
            response.headers[.retryAfter] = "1"
            return response
        }
    }

    /// ``refuse(_:status:detail:)``, counted.
    private func refused(_ reason: Reason, status: HTTPResponse.Status, detail: [String: Any] = [:]) -> Response {
        metrics?.batchRefused(reason.rawValue)
        return Self.refuse(reason, status: status, detail: detail)
    }

    /// Stores `events` in one transaction; when the store refuses a value, stores them one by
    /// one and returns the ones it refused.
    private func store(_ events: [(index: Int, event: CollectedEvent)]) async throws -> (StoredBatch, [RefusedEvent]) {
        guard !events.isEmpty else { return (StoredBatch(new: 0, duplicates: 0), []) }
        do {
            return (try await store.store(events.map(\.event)), [])
        } catch OperationLogStoreError.refused {
            var total = StoredBatch(new: 0, duplicates: 0)
            var refused: [RefusedEvent] = []
            for (index, event) in events {
                do {
                    let stored = try await store.store([event])
                    total.new += stored.new
                    total.duplicates += stored.duplicates
                } catch OperationLogStoreError.refused {
                    refused.append(RefusedEvent(index: index, field: "event", reason: "store_refused"))
                }
            }
            return (total, refused)
        }
    }

    struct Refusal: Error {
        var reason: Reason
        var response: Response

        init(_ reason: Reason, status: HTTPResponse.Status, detail: [String: Any] = [:]) {
            self.reason = reason
            self.response = OperationLogCollector.refuse(reason, status: status, detail: detail)
        }
    }

    /// One event of a batch refused, and why: the answer's `refused` entries.
    struct RefusedEvent: Hashable {
        /// Its position in the batch's `events`, from 0.
        var index: Int
        /// The field at fault (`event` when the event as a whole is).
        var field: String
        /// `missing`, `invalid`, `too_large`, `holds_nul` or `store_refused`.
        var reason: String
    }

    /// A well-formed batch: the events that passed the checks, with their positions, and the
    /// ones that did not.
    struct ParsedBatch {
        var events: [(index: Int, event: CollectedEvent)]
        var refused: [RefusedEvent]
    }

    /// The batch's events, each checked; or the answer refusing the batch.
    func parse(_ compressed: Data, receivedAt received: Int64) -> Result<ParsedBatch, Refusal> {
        let inflated: Data
        do {
            inflated = try Gzip.decompress(compressed, limit: limits.maximumInflatedSize)
        } catch .tooLarge {
            return .failure(
                Refusal(.inflatedTooLarge, status: .contentTooLarge, detail: ["limit": limits.maximumInflatedSize]))
        } catch {
            return .failure(Refusal(.notGzip, status: .badRequest))
        }
        let json: JSON
        do {
            json = try JSONParser.parse(
                inflated,
                limits: .init(maximumNodes: limits.maximumValues, arrayMember: ("events", limits.maximumEvents)))
        } catch {
            switch error.exceeded {
            case .arrayMember?:
                return .failure(
                    Refusal(.tooManyEvents, status: .contentTooLarge, detail: ["limit": limits.maximumEvents]))
            case .nodes?:
                return .failure(
                    Refusal(.tooManyValues, status: .contentTooLarge, detail: ["limit": limits.maximumValues]))
            case nil:
                return .failure(Refusal(.malformedJSON, status: .badRequest))
            }
        }
        guard let list = json["events"]?.arrayValue, !list.isEmpty else {
            return .failure(Refusal(.missingEvents, status: .badRequest))
        }
        // The device's clock when it sent the batch, if it said; subtracting in Int64 cannot
        // overflow for a time within what milliseconds since 1970 sensibly hold.
        let offset = json["sent"]?.intValue.flatMap { sent in
            (0..<Self.timeLimit).contains(Int64(sent)) ? received - Int64(sent) : nil
        }
        var batch = ParsedBatch(events: [], refused: [])
        batch.events.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            switch Self.event(item, maximumPayloadSize: limits.maximumPayloadSize) {
            case .success(var event):
                event.clockOffsetMilliseconds = offset
                batch.events.append((index, event))
            case .failure(let fault):
                batch.refused.append(RefusedEvent(index: index, field: fault.field, reason: fault.reason))
            }
        }
        return .success(batch)
    }

    /// Every reason an event of an accepted batch can be refused for.
    static let eventRefusalReasons = ["missing", "invalid", "too_large", "holds_nul", "store_refused"]

    /// Why one event was refused.
    struct BadField: Error {
        var field: String
        var reason: String
    }

    /// Times from 1970 up to 2^62 ms (about 146 million years): what every store's 64-bit
    /// integer holds with room for a clock offset.
    static let timeLimit: Int64 = 1 << 62

    /// `item` as an event, once everything a store could refuse is ruled out.
    static func event(_ item: JSON, maximumPayloadSize: Int) -> Result<CollectedEvent, BadField> {
        guard case .object = item else { return .failure(BadField(field: "event", reason: "invalid")) }
        guard let idValue = item["id"] else { return .failure(BadField(field: "id", reason: "missing")) }
        guard let id = idValue.stringValue, isValidID(id) else { return .failure(BadField(field: "id", reason: "invalid")) }
        guard let nameValue = item["name"] else { return .failure(BadField(field: "name", reason: "missing")) }
        guard let name = nameValue.stringValue, !name.isEmpty else { return .failure(BadField(field: "name", reason: "invalid")) }
        guard name.utf8.count <= OperationEvent.maximumNameLength else {
            return .failure(BadField(field: "name", reason: "too_large"))
        }
        guard !name.utf8.contains(0) else { return .failure(BadField(field: "name", reason: "holds_nul")) }
        guard let timeValue = item["time"] else { return .failure(BadField(field: "time", reason: "missing")) }
        guard let time = timeValue.intValue, (0..<timeLimit).contains(Int64(time)) else {
            return .failure(BadField(field: "time", reason: "invalid"))
        }
        guard let payload = item["payload"] else { return .failure(BadField(field: "payload", reason: "missing")) }
        // Before anything walks every byte of it: a payload of one 8 MB string is refused here.
        guard !payload.encodingCertainlyExceeds(maximumPayloadSize) else {
            return .failure(BadField(field: "payload", reason: "too_large"))
        }
        // PostgreSQL's jsonb cannot hold U+0000, and a text column in most stores ends there.
        guard !payload.holdsNULCharacter else { return .failure(BadField(field: "payload", reason: "holds_nul")) }
        guard let encoded = try? payload.encoded() else { return .failure(BadField(field: "payload", reason: "invalid")) }
        guard encoded.count <= maximumPayloadSize else { return .failure(BadField(field: "payload", reason: "too_large")) }
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

    /// One page of the counts by name: `?limit=` (at most ``Limits/maximumStatsPage``) from
    /// `?offset=`; `next` is the offset of the next page while there may be one.
    func stats(limit: Int?, offset: Int?) async -> Response {
        let limit = min(max(limit ?? limits.maximumStatsPage, 1), limits.maximumStatsPage)
        let offset = max(offset ?? 0, 0)
        do {
            let summary = try await store.summary(limit: limit, offset: offset)
            var object: [String: Any] = [
                "events": summary.events,
                "byName": summary.byName.map { ["name": $0.name, "count": $0.count] as [String: Any] },
            ]
            // An offset near Int.max is input too: the next page's offset must not overflow.
            let (next, overflowed) = offset.addingReportingOverflow(limit)
            object["next"] = summary.byName.count == limit && !overflowed ? next : NSNull()
            return JSONResponse.make(object)
        } catch {
            return Self.refuse(.storeUnavailable, status: .serviceUnavailable)
        }
    }

    static func refuse(_ reason: Reason, status: HTTPResponse.Status, detail: [String: Any] = [:]) -> Response {
        var object: [String: Any] = ["code": Int(status.code), "reason": reason.rawValue]
        for (key, value) in detail { object[key] = value }
        return JSONResponse.make(object, status: status)
    }
}
