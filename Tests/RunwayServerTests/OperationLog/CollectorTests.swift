import AsyncHTTPClient
import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import NIOCore
@testable import Runway
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

/// The collector against hostile and broken batches, sent raw over HTTP: each gets its status
/// and machine-readable reason, and a refused batch stores nothing.
@Suite("Operation-log collector", .timeLimit(.minutes(10)))
struct CollectorTests {
    struct Answer {
        var status: Int
        var json: JSON?
        var retryAfter: String? = nil
        var reason: String? { json?["reason"]?.stringValue }
    }

    static func post(
        _ body: Data, to server: DemoServer, encoding: String? = "gzip", headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: server.baseURL + "/oplog/batches")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        if let encoding { request.headers.add(name: "content-encoding", value: encoding) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: Int(response.status.code), json: try? JSON(parsing: Data(buffer: bytes)),
            retryAfter: response.headers.first(name: "retry-after"))
    }

    /// The signature header fields ``HMACSigner`` adds to a batch `POST` of `body` to `server`.
    static func signatureFields(for body: Data, to server: DemoServer, secret: SymmetricKey) throws -> [String: String] {
        var head = HTTPRequest(
            method: .post, scheme: "http", authority: server.baseURL.replacingOccurrences(of: "http://", with: ""),
            path: "/oplog/batches")
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentEncoding] = "gzip"
        try HMACSigner(keyID: "oplog", secret: secret).sign(
            &head, body: body, context: SigningContext(apiName: "raw", service: "oplog", attempt: 1))
        var fields: [String: String] = [:]
        for field in head.headerFields where field.name != .contentType && field.name != .contentEncoding {
            fields[field.name.rawName] = field.value
        }
        return fields
    }

    static func batch(_ events: [String]) -> Data {
        Data(#"{"events":[\#(events.joined(separator: ","))]}"#.utf8)
    }

    static func event(id: String = UUID().uuidString, name: String = "tap", time: Int = 1_700_000_000_000) -> String {
        #"{"id":"\#(id)","name":"\#(name)","time":\#(time),"payload":{"n":1}}"#
    }

    @Test("A good batch is stored; sent again it answers 200 with every event a duplicate")
    func replayedBatchIsAllDuplicates() async throws {
        try await withCollector { fixture in
            let body = try Gzip.compress(Self.batch((0..<3).map { _ in Self.event() }))
            let first = try await Self.post(body, to: fixture.server)
            #expect(first.status == 200 && first.json?["new"]?.intValue == 3 && first.json?["duplicates"]?.intValue == 0)
            let again = try await Self.post(body, to: fixture.server)
            #expect(again.status == 200 && again.json?["new"]?.intValue == 0 && again.json?["duplicates"]?.intValue == 3)
            #expect(try await fixture.store.summary().events == 3)
        }
    }

    @Test("Broken batches: each its status and reason, nothing stored; a 413 states its limit")
    func brokenBatchesAreRefused() async throws {
        try await withCollector { fixture in
            let good = Self.batch([Self.event()])
            var cases: [(String, Data, String?, Int, String)] = [
                ("no content encoding", good, nil, 415, "unsupported_encoding"),
                ("not gzip", good, "gzip", 400, "not_gzip"),
                ("gzip of not JSON", try Gzip.compress(Data("events: many".utf8)), "gzip", 400, "malformed_json"),
                ("no events", try Gzip.compress(Data(#"{"items":[]}"#.utf8)), "gzip", 400, "missing_events"),
                ("cut short", try Gzip.compress(good).dropLast(6), "gzip", 400, "not_gzip"),
            ]
            let manyEvents = Self.batch((0..<10_000).map { _ in Self.event() })
            cases.append(("10,000 events", try Gzip.compress(manyEvents), "gzip", 413, "too_many_events"))
            // 64 KB of gzip that inflates to 64 MB: refused once the 8 MB limit was produced.
            let bomb = try Gzip.compress(Data(count: 64 << 20), level: 9)
            #expect(bomb.count < 100_000)
            cases.append(("zip bomb", bomb, "gzip", 413, "inflated_too_large"))
            cases.append(("over the body limit", Data(count: (1 << 20) + 1), "gzip", 413, "body_too_large"))
            for (name, body, encoding, status, reason) in cases {
                let answer = try await Self.post(body, to: fixture.server, encoding: encoding)
                #expect(answer.status == status, "\(name)")
                #expect(answer.reason == reason, "\(name): \(String(describing: answer.json))")
                if status == 413 { #expect(answer.json?["limit"]?.intValue != nil, "\(name)") }
            }
            #expect(try await fixture.store.summary().events == 0)
        }
    }

    @Test("Events and JSON values are counted while parsing: 12 KB of gzip that inflate to 8 MB of tiny values are refused at the first value past a limit")
    func valuesAreCountedWhileParsing() async throws {
        try await withCollector { fixture in
            let limits = OperationLogCollector.Limits()
            // `[{},{},…]` filling what is left of the inflated limit around `prefix` and `suffix`.
            func filled(_ prefix: String, _ suffix: String) -> String {
                let room = limits.maximumInflatedSize - prefix.utf8.count - suffix.utf8.count
                return prefix + "[" + String(repeating: "{},", count: (room - 4) / 3) + "{}]" + suffix
            }
            let cases: [(String, String, String, Int)] = [
                ("a million empty events", filled(#"{"events":"#, "}"), "too_many_events", limits.maximumEvents),
                ("a million values beside one event", filled(#"{"events":[\#(Self.event())],"pad":"#, "}"), "too_many_values", limits.maximumValues),
                ("a million values in one payload", filled(#"{"events":[{"id":"a","name":"tap","time":1,"payload":"#, "}]}"), "too_many_values", limits.maximumValues),
            ]
            for (name, text, reason, limit) in cases {
                let body = try Gzip.compress(Data(text.utf8), level: 9)
                #expect(body.count < 40_000, "\(name): \(body.count) bytes of gzip")
                #expect(text.utf8.count <= limits.maximumInflatedSize && text.utf8.count > limits.maximumInflatedSize - 64)
                let answer = try await Self.post(body, to: fixture.server)
                #expect(answer.status == 413, "\(name)")
                #expect(answer.reason == reason, "\(name): \(String(describing: answer.json))")
                #expect(answer.json?["limit"]?.intValue == limit, "\(name)")
            }
            #expect(try await fixture.store.summary().events == 0)
        }
    }

    @Test("The value limit leaves room for one event of the largest payload, so a batch of one always parses")
    func oneLargestEventFitsTheValueLimit() async throws {
        try await withCollector { fixture in
            let limits = OperationLogCollector.Limits()
            // The densest payload: an array of one-digit numbers, two bytes a value, at the size limit.
            let count = (limits.maximumPayloadSize - 1) / 2
            let payload = "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]"
            #expect(payload.utf8.count <= limits.maximumPayloadSize)
            let text = #"{"events":[{"id":"dense","name":"tap","time":1,"payload":\#(payload)}],"sent":1}"#
            let answer = try await Self.post(try Gzip.compress(Data(text.utf8)), to: fixture.server)
            #expect(answer.status == 200 && answer.json?["new"]?.intValue == 1, "\(String(describing: answer.json))")
        }
    }

    @Test("Bad events are refused one by one, each by index, field and reason; the good ones are stored")
    func badEventsAreRefusedOneByOne() async throws {
        var limits = OperationLogCollector.Limits()
        limits.maximumPayloadSize = 64
        try await withCollector(limits: limits) { fixture in
            let good = (0..<4).map { _ in UUID().uuidString }
            let events = [
                Self.event(id: good[0]),
                #"{"name":"tap","time":1,"payload":{}}"#,
                Self.event(id: good[1]),
                #"{"id":"a1","name":"ta\u0000p","time":1,"payload":{}}"#,
                #"{"id":"a2","name":"tap","time":1,"payload":{"note":"x\u0000y"}}"#,
                #"{"id":"a3","name":"tap","time":1,"payload":{"k\u0000":1}}"#,
                #"{"id":"a4","name":"tap","time":-1,"payload":{}}"#,
                #"{"id":"a5","name":"tap","time":1,"payload":{"text":"\#(String(repeating: "x", count: 100))"}}"#,
                Self.event(id: good[2]),
                #""tap""#,
                #"{"id":"a7; DROP TABLE","name":"tap","time":1,"payload":{}}"#,
                #"{"id":"a8","name":"tap","time":1}"#,
                Self.event(id: good[3]),
            ]
            let answer = try await Self.post(try Gzip.compress(Self.batch(events)), to: fixture.server)
            #expect(answer.status == 200)
            #expect(answer.json?["new"]?.intValue == 4)
            let refused = (answer.json?["refused"]?.arrayValue ?? []).map {
                "\($0["index"]?.intValue ?? -1) \($0["field"]?.stringValue ?? "") \($0["reason"]?.stringValue ?? "")"
            }
            #expect(
                refused == [
                    "1 id missing", "3 name holds_nul", "4 payload holds_nul", "5 payload holds_nul", "6 time invalid",
                    "7 payload too_large", "9 event invalid", "10 id invalid", "11 payload missing",
                ])
            #expect(Set(try await fixture.store.allEventIDs()) == Set(good))
        }
    }

    @Test("A row the SQLite store's own constraint refuses is store_refused, named by index — not counted as a duplicate and lost")
    func sqliteConstraintIsARefusal() async throws {
        try await withCollector { fixture in
            // A deployment's own rule on the table (here: no event named `forbidden`), added the
            // way SQLite adds a CHECK: the table rebuilt with it.
            let queue = try DatabaseQueue(path: fixture.folder.appendingPathComponent("collector.sqlite").path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE checked (
                            event_id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL CHECK (name <> 'forbidden'),
                            time_ms INTEGER NOT NULL, payload TEXT NOT NULL, received_ms INTEGER NOT NULL, clock_offset_ms INTEGER
                        ) WITHOUT ROWID;
                        INSERT INTO checked SELECT * FROM collected_event;
                        DROP TABLE collected_event;
                        ALTER TABLE checked RENAME TO collected_event;
                        """)
            }
            try queue.close()
            let good = [UUID().uuidString, UUID().uuidString]
            let events = [Self.event(id: good[0]), Self.event(name: "forbidden"), Self.event(id: good[1])]
            let answer = try await Self.post(try Gzip.compress(Self.batch(events)), to: fixture.server)
            #expect(answer.status == 200)
            #expect(answer.json?["new"]?.intValue == 2)
            #expect(answer.json?["duplicates"]?.intValue == 0)
            let refused = (answer.json?["refused"]?.arrayValue ?? []).map {
                "\($0["index"]?.intValue ?? -1) \($0["field"]?.stringValue ?? "") \($0["reason"]?.stringValue ?? "")"
            }
            #expect(refused == ["1 event store_refused"])
            #expect(Set(try await fixture.store.allEventIDs()) == Set(good))
        }
    }

    @Test("A batch that says when it was sent stores the device's clock offset with each event")
    func sentTimeGivesTheClockOffset() async throws {
        try await withCollector { fixture in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let dayAhead = now + 86_400_000
            let ids = [UUID().uuidString, UUID().uuidString]
            let body = #"{"sent":\#(dayAhead),"events":[\#(Self.event(id: ids[0])),\#(Self.event(id: ids[1]))]}"#
            #expect(try await Self.post(try Gzip.compress(Data(body.utf8)), to: fixture.server).status == 200)
            let unsaid = UUID().uuidString
            _ = try await Self.post(try Gzip.compress(Self.batch([Self.event(id: unsaid)])), to: fixture.server)
            let offsets = try await fixture.store.clockOffsets()
            for id in ids {
                let offset = try #require(offsets[id] ?? nil)
                // The device was a day ahead: the offset is a day back, give or take the trip.
                #expect(abs(offset + 86_400_000) < 60_000, "\(offset)")
            }
            #expect(offsets[unsaid] == .some(nil))
        }
    }

    @Test("Behind the verifier: no signature or a wrong one is refused, nothing stored")
    func unsignedBatchesAreRefused() async throws {
        let secret = SymmetricKey(size: .bits256)
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["oplog": [secret]])
        try await withCollector(verifier: verifier) { fixture in
            let body = try Gzip.compress(Self.batch([Self.event()]))
            let unsigned = try await Self.post(body, to: fixture.server)
            #expect(unsigned.status == 401 && unsigned.reason == "missing_header")

            // Signed with another secret.
            let fields = try Self.signatureFields(for: body, to: fixture.server, secret: SymmetricKey(size: .bits256))
            let wrong = try await Self.post(body, to: fixture.server, headers: fields)
            #expect(wrong.status == 401 && wrong.reason == "bad_signature")
            #expect(try await fixture.store.summary().events == 0)
        }
    }
}

@Suite("Gzip", .timeLimit(.minutes(10)))
struct GzipTests {
    @Test("Round trip, empty and large")
    func roundTrip() throws {
        for size in [0, 1, 65_535, 65_536, 300_000] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
            let compressed = try Gzip.compress(data)
            #expect(compressed.prefix(2) == Data([0x1F, 0x8B]), "a gzip header")
            #expect(try Gzip.decompress(compressed, limit: size) == data)
        }
    }

    @Test("Inflating past the limit stops at the limit")
    func limit() throws {
        let compressed = try Gzip.compress(Data(count: 1_000_001))
        #expect(throws: Gzip.Failure.tooLarge(limit: 1_000_000)) { try Gzip.decompress(compressed, limit: 1_000_000) }
    }

    @Test("Not gzip, cut short, or followed by other bytes: malformed")
    func malformed() throws {
        let compressed = try Gzip.compress(Data("hello".utf8))
        for bad in [Data("hello".utf8), compressed.dropLast(4), compressed + Data([0]), Data()] {
            #expect(throws: Gzip.Failure.self) { try Gzip.decompress(bad, limit: 100) }
        }
    }
}
