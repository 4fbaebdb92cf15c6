import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
@testable import RunwayNIO
import RunwayTestSupport
import Testing

/// The AsyncHTTPClient transport parses an address's URL once and makes each exchange's
/// request from that template, with the exchange's own headers and body.
@Suite("AsyncHTTPClient transport: request templates, one URL parse per address", .timeLimit(.minutes(5)))
struct RequestTemplatesTests {
    func head(_ method: HTTPRequest.Method, _ path: String, authority: String = "api.example.com") -> HTTPRequest {
        HTTPRequest(method: method, scheme: "https", authority: authority, path: path)
    }

    @Test("one template per method and address, without headers or a body")
    func onePerAddress() throws {
        let templates = RequestTemplates()
        let first = try templates.request(for: head(.get, "/v1/items"), scheme: "https", authority: "api.example.com")
        _ = try templates.request(for: head(.get, "/v1/items"), scheme: "https", authority: "api.example.com")
        #expect(templates.count == 1)
        #expect(first.url.absoluteString == "https://api.example.com/v1/items")
        #expect(first.method == .GET)
        #expect(first.headers.isEmpty)
        #expect(first.body == nil)

        let post = try templates.request(for: head(.post, "/v1/items"), scheme: "https", authority: "api.example.com")
        #expect(post.method == .POST)
        _ = try templates.request(for: head(.get, "/v1/items/2"), scheme: "https", authority: "api.example.com")
        let otherHost = head(.get, "/v1/items", authority: "other.example.com")
        _ = try templates.request(for: otherHost, scheme: "https", authority: "other.example.com")
        #expect(templates.count == 4, "method, path and host each make an address of their own")
    }

    @Test("a URL with a query is made each time and never kept: what changes per load, or a token, stays with its load")
    func queryNotKept() throws {
        let templates = RequestTemplates()
        for _ in 0..<2 {
            let made = try templates.request(
                for: head(.get, "/v1/items?page=2&access_token=t"), scheme: "https", authority: "api.example.com")
            #expect(made.url.absoluteString == "https://api.example.com/v1/items?page=2&access_token=t")
        }
        #expect(templates.count == 0)
    }

    @Test("the set starts afresh past its capacity, so it stays bounded")
    func bounded() throws {
        let templates = RequestTemplates(capacity: 3)
        for page in 0..<3 {
            _ = try templates.request(for: head(.get, "/items/\(page)"), scheme: "https", authority: "api.example.com")
        }
        #expect(templates.count == 3)
        let fourth = try templates.request(for: head(.get, "/items/3"), scheme: "https", authority: "api.example.com")
        #expect(templates.count == 1)
        #expect(fourth.url.absoluteString == "https://api.example.com/items/3")
    }

    @Test("a URL AsyncHTTPClient refuses throws its error each time and is never kept")
    func refusedNotKept() {
        let templates = RequestTemplates()
        for _ in 0..<2 {
            #expect(throws: (any Error).self) {
                _ = try templates.request(for: head(.get, "/x"), scheme: "ftp", authority: "files.example.com")
            }
        }
        #expect(templates.count == 0)
    }

    @Test("exchanges with one address each send their own headers and body over the wire")
    func ownHeadersAndBody() async throws {
        try await withServerAndTransport { server, transport in
            let load = try #require(HTTPField.Name("X-Load"))
            for (index, body) in ["first", "second", ""].enumerated() {
                var head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/echo/t")
                head.headerFields[load] = "load-\(index)"
                let collector = BodyCollector()
                var request = TransportRequest(
                    head: head, content: body.isEmpty ? nil : TransportBody(Data(body.utf8)), timeout: .seconds(300),
                    apiName: "Templates", responseSink: collector)
                // As the engine sends an API call: the answer kept in memory.
                request.sinkKeepsInMemory = true
                let answer = try await transport.send(request)
                #expect(answer.head.status == .ok)
                let echo = try #require(try JSONSerialization.jsonObject(with: collector.collected) as? [String: Any])
                let headers = try #require(echo["headers"] as? [String: String])
                #expect(headers["x-load"] == "load-\(index)", "each exchange's own header: \(headers)")
                #expect(echo["body"] as? String == body)
                #expect(headers["content-length"] == "\(body.utf8.count)", "a POST says its length, 0 when empty")
            }
            #expect(transport.templates.count == 1, "one address, one template")
        }
    }
}
