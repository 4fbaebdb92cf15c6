import Foundation
import HTTPTypes
@testable import Runway
import Testing

/// The jar's rules for what it keeps (RFC 6265bis §5.6) and how much.
@Suite("CookieJar: what is kept, and how much", .timeLimit(.minutes(10)))
struct CookieJarTests {
    static func answer(_ setCookies: [String]) -> HTTPResponse {
        var fields = HTTPFields()
        for value in setCookies { fields.append(HTTPField(name: .setCookie, value: value)) }
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test("a Secure cookie, or one named __Secure- or __Host-, is kept only from HTTPS, and sent only over it")
    func secure() throws {
        let jar = CookieJar()
        jar.store(Self.answer(["a=1; Secure", "__Secure-b=2; Secure", "__Host-c=3; Secure; Path=/", "d=4"]), for: try Self.url("http://api.example.com/x"))
        #expect(jar.names == ["d"])
        jar.store(Self.answer(["a=1; Secure", "__Secure-b=2; Secure", "__Host-c=3; Secure; Path=/"]), for: try Self.url("https://api.example.com/x"))
        #expect(Set(jar.names) == ["a", "__Secure-b", "__Host-c", "d"])
        #expect(jar.field(for: try Self.url("http://api.example.com/x")) == "d=4")
        #expect(jar.field(for: try Self.url("https://api.example.com/x"))?.split(separator: ";").count == 4)
    }

    @Test("the prefixes keep their promises: __Secure- needs Secure, __Host- needs Secure, no Domain and Path=/")
    func prefixes() throws {
        let jar = CookieJar()
        let https = try Self.url("https://api.example.com/a/b")
        jar.store(
            Self.answer([
                "__Secure-nope=1", "__Host-domain=2; Secure; Path=/; Domain=example.com", "__Host-path=3; Secure; Path=/a",
                "__Host-ok=4; Secure; Path=/",
            ]), for: https)
        #expect(jar.names == ["__Host-ok"])
    }

    @Test("a Domain must hold the host, have two labels, and name no IP address")
    func domains() throws {
        let jar = CookieJar()
        jar.store(
            Self.answer(["parent=1; Domain=example.com", "tld=2; Domain=com", "other=3; Domain=example.org", "host=4"]),
            for: try Self.url("https://api.example.com/"))
        #expect(Set(jar.names) == ["parent", "host"])
        #expect(jar.field(for: try Self.url("https://www.example.com/")) == "parent=1", "a parent-domain cookie matches its subdomains")
        let byAddress = CookieJar()
        byAddress.store(Self.answer(["wide=1; Domain=0.0.1", "own=2; Domain=127.0.0.1", "plain=3"]), for: try Self.url("http://127.0.0.1:8080/"))
        #expect(Set(byAddress.names) == ["own", "plain"])
    }

    @Test("the jar is bounded: a cookie over 4,096 bytes is ignored, a domain keeps 50, the jar its limit, the oldest go first")
    func bounded() throws {
        let url = try Self.url("https://api.example.com/")
        let jar = CookieJar()
        jar.store(Self.answer(["big=" + String(repeating: "x", count: 4096)]), for: url)
        #expect(jar.names.isEmpty)
        jar.store(Self.answer((0..<60).map { "c\($0)=v" }), for: url)
        #expect(jar.names.count == 50)
        #expect(jar.names.first == "c10" && jar.names.last == "c59", "the ten oldest went")
        let small = CookieJar(limits: .init(cookies: 5, cookiesPerDomain: 50, cookieBytes: 4096))
        small.store(Self.answer((0..<8).map { "s\($0)=v" }), for: url)
        #expect(small.names == ["s3", "s4", "s5", "s6", "s7"])
    }
}
