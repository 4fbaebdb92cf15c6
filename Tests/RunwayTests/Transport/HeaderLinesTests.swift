import HTTPTypes
import Runway
import Testing

/// `HTTPFields.headerLines` and `forEachHeaderLine(_:)`: what both transports send as HTTP/1.1
/// header lines.
@Suite("The fields as header lines", .timeLimit(.minutes(1)))
struct HeaderLinesTests {
    func lines(_ fields: HTTPFields) -> [String] {
        var seen: [String] = []
        fields.forEachHeaderLine { seen.append("\($0): \($1)") }
        return seen
    }

    @Test("every field its own line, in order, and the cookie pairs one line in the first pair's place")
    func cookiesJoinedInPlace() throws {
        let tag = try #require(HTTPField.Name("X-Tag"))
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "application/json"))
        fields.append(HTTPField(name: .cookie, value: "a=1"))
        fields.append(HTTPField(name: tag, value: "one"))
        fields.append(HTTPField(name: .cookie, value: "b=2"))
        fields.append(HTTPField(name: tag, value: "two"))
        fields.append(HTTPField(name: .cookie, value: "c=3"))
        let expected = ["Accept: application/json", "Cookie: a=1; b=2; c=3", "X-Tag: one", "X-Tag: two"]
        #expect(lines(fields) == expected)
        #expect(fields.headerLines.map { "\($0.name): \($0.value)" } == expected)
    }

    @Test("one cookie pair, no cookie, no field: the fields as they are")
    func withoutJoining() throws {
        var fields = HTTPFields()
        #expect(lines(fields).isEmpty)
        fields.append(HTTPField(name: .userAgent, value: "Runway/1"))
        #expect(lines(fields) == ["User-Agent: Runway/1"])
        fields.append(HTTPField(name: .cookie, value: "session=x"))
        fields.append(HTTPField(name: .acceptEncoding, value: "gzip"))
        #expect(lines(fields) == ["User-Agent: Runway/1", "Cookie: session=x", "Accept-Encoding: gzip"])
        #expect(fields.headerLines.count == 3)
    }
}
