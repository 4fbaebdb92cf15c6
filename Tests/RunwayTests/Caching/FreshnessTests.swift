import Foundation
import HTTPTypes
import Testing
@testable import Runway

/// How long an answer is fresh, read from its header fields (RFC 9111 §4.2, §5.2.2): the cases
/// the differential suite cannot reach over httpbin (which always sends `Date`), and header
/// values no honest server sends.
@Suite("Response cache: freshness from the server's header fields", .timeLimit(.minutes(10)))
struct FreshnessTests {
    let arrival = Date(timeIntervalSince1970: 1_800_000_000)

    func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    func date(_ offset: TimeInterval) -> String { HTTPCacheDifferentialTests.httpDate.string(from: arrival.addingTimeInterval(offset)) }

    func lifetime(_ pairs: [(String, String)], mode: CachePolicy.Freshness = .server, ceiling: Duration = .seconds(86_400)) -> TimeInterval {
        Freshness(headers: fields(pairs), arrivedAt: arrival).expiry(arrivedAt: arrival, ceiling: ceiling, mode: mode)
            .timeIntervalSince(arrival)
    }

    @Test("Expires without Date counts from the answer's arrival; with Date, from Date; not a date: already expired")
    func expires() {
        #expect(lifetime([("Expires", date(120))]) == 120)
        #expect(lifetime([("Expires", date(120)), ("Date", date(-30))]) == 120)  // 150 s lifetime, 30 s old
        #expect(lifetime([("Expires", "0")]) == 0)
        #expect(lifetime([("Expires", date(120)), ("Cache-Control", "max-age=10")]) == 10, "max-age wins over Expires")
        #expect(lifetime([("Cache-Control", "s-maxage=600, max-age=10")]) == 10, "s-maxage is a shared cache's")
    }

    @Test("Age and a Date in the past count against max-age; the larger of the two")
    func age() {
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Age", "100")]) == 0)
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Age", "10")]) == 50)
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Age", "10"), ("Date", date(-20))]) == 40)
    }

    @Test("the API's lifetime when the server gives none (policy), the heuristic (server), the ceiling over both")
    func modes() {
        let lastModified = [("Last-Modified", date(-10 * 86_400)), ("Date", date(0))]
        #expect(lifetime(lastModified, mode: .server) == 86_400)
        #expect(lifetime(lastModified, mode: .server, ceiling: .seconds(600)) == 600)
        #expect(lifetime([], mode: .server) == 0)
        #expect(lifetime([], mode: .policy, ceiling: .seconds(180)) == 180)
        #expect(lifetime([("Cache-Control", "max-age=60")], mode: .policy, ceiling: .seconds(180)) == 60)
        #expect(lifetime([("Cache-Control", "max-age=600")], mode: .policy, ceiling: .seconds(180)) == 180)
        #expect(lifetime([("Cache-Control", "no-cache, max-age=600")], mode: .policy) == 0)
    }

    @Test("hostile Cache-Control values: case, quotes, commas in quotes, repeats, junk, numbers past any clock")
    func hostile() {
        let control = CacheControl(fields([("Cache-Control", "MAX-AGE=\"30\", private=\"a, b\", No-Store"), ("Cache-Control", "stale-if-error=99999999999999999999999")]))
        #expect(control.maxAge == 30)
        #expect(control.noStore)
        #expect(control.isPrivate)
        #expect(control.staleIfError == CacheControl.longest)
        #expect(CacheControl(fields([("Cache-Control", "max-age=-5")])).maxAge == 0, "malformed max-age reads as stale")
        #expect(CacheControl(fields([("Cache-Control", "max-age=1e9, ,,=, \"")])).maxAge == 0)
        #expect(CacheControl(fields([("Cache-Control", "max-age=99999999999999999999")])).maxAge == CacheControl.longest)
        #expect(lifetime([("Cache-Control", "max-age=99999999999999999999")]) == 86_400, "capped by the ceiling, no trap")
        #expect(lifetime([("Age", "18446744073709551616"), ("Cache-Control", "max-age=60")]) == 0)
    }

    @Test("Vary: names compared without case, in any order; * never matches")
    func vary() {
        let stored = fields([("Vary", "X-B, x-a")])
        let request = fields([("X-A", "1"), ("X-B", "2")])
        let text = CacheVariant.text(for: CacheVariant.names(in: stored), request: request)
        #expect(CacheVariant.matches(stored: text, headers: fields([("Vary", "x-a"), ("Vary", "X-B")]), request: request))
        #expect(!CacheVariant.matches(stored: text, headers: stored, request: fields([("X-A", "1"), ("X-B", "3")])))
        #expect(CacheVariant.names(in: fields([("Vary", "Accept, *")])) == .any)
    }
}
