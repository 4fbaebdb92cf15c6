import Foundation
import RunwayLinks
import Testing

@Suite("Incoming URL validation", .timeLimit(.minutes(10)))
struct IncomingURLTests {
    @Test("a well-formed URL is split and decoded once; scheme and host are case-insensitive")
    func parses() throws {
        let url = try IncomingURL("ToDoList://WWW.Acme.com:8080/items/a%20b/%E6%96%B0?q=x%2By&tag=%2541#Due%20now")
        #expect(url.scheme == "todolist")
        #expect(url.host == "www.acme.com")
        #expect(url.port == 8080)
        #expect(url.pathSegments == ["items", "a b", "新"])
        #expect(url.queryItems == ["q": "x+y", "tag": "%41"], "decoded once: %2541 is the text %41")
        #expect(url.fragment == "Due now")
    }

    @Test("hostile input is refused with a typed reason", arguments: [
        ("todolist://www.acme.com?a%00b", LinkError.controlCharacter(component: "query")),
        ("todolist://www.acme.com/%C0%AF", LinkError.invalidUTF8(component: "path")),
        ("todolist://www.acme.com?%E0%80%AF", LinkError.invalidUTF8(component: "query")),
        ("todolist://www.acme.com/%zz", LinkError.malformedPercentEncoding(component: "path")),
        ("todolist://www.acme.com/%4", LinkError.malformedPercentEncoding(component: "path")),
        ("todolist://www.acme.com?id=1&id=2", LinkError.duplicateQueryKey("id")),
        ("todolist://www.acme.com/a b", LinkError.invalidCharacter(offset: 25)),
        ("todolist://www.acme.com/é", LinkError.invalidCharacter(offset: 24)),
        ("todolist://www.acme.com#a\u{7}", LinkError.invalidCharacter(offset: 25)),
        ("todolist://user@www.acme.com", LinkError.malformed(reason: "user info is not accepted")),
        ("todolist:www.acme.com", LinkError.malformed(reason: "no authority (expected \"//\" after the scheme)")),
        ("1todo://x", LinkError.malformed(reason: "invalid scheme")),
        ("todolist://x:99999", LinkError.malformed(reason: "invalid port")),
        ("todolist://x#a#b", LinkError.malformed(reason: "\"#\" inside the fragment")),
        ("no-colon", LinkError.malformed(reason: "no scheme")),
        ("shop://sh1orders/v1/F99op://", LinkError.malformed(reason: "empty path segment")),  // found by the fuzzer
        ("shop://items//42", LinkError.malformed(reason: "empty path segment")),
    ])
    func hostile(_ text: String, _ expected: LinkError) {
        #expect(throws: expected) { try IncomingURL(text) }
    }

    @Test("over-long URLs are refused before parsing")
    func tooLong() {
        let long = "todolist://www.acme.com?" + String(repeating: "a", count: 5000)
        #expect(throws: LinkError.tooLong(length: long.utf8.count, limit: 2048)) { try IncomingURL(long) }
        #expect(throws: Never.self) { try IncomingURL(long, limits: LinkLimits(maximumLength: 10_000)) }
    }

    @Test("the duplicate-key rule is configurable: first or last instead of refusing")
    func duplicateRule() throws {
        #expect(try IncomingURL("s://h?k=1&k=2", limits: LinkLimits(duplicateKeys: .first)).queryItems == ["k": "1"])
        #expect(try IncomingURL("s://h?k=1&k=2", limits: LinkLimits(duplicateKeys: .last)).queryItems == ["k": "2"])
    }
}
