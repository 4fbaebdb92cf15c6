import Foundation
import HTTPTypes
import RunwayTestSupport
import Testing
@testable import Runway

@Suite("Request building: URL, query, body, headers", .timeLimit(.minutes(10)))
struct RequestBuilderTests {
    let service = Service(
        id: .test, environment: .develop,
        baseURLs: [.develop: "http://127.0.0.1:8080/api/", .release: "https://api.example.com/v2"],
        commonHeaders: [.init("X-App")!: "runway"], commonParams: ["app": "1", "city": "bj"])

    @Test("the query is sorted, percent-encoded by RFC 3986, and the load's params win over common ones")
    func sortedEncodedQuery() throws {
        let params: Parameters = ["z": "a b+c", "city": "sh", "tags": ["新", "x&y"], "n": 3, "ok": true, "none": nil]
        let request = try RequestBuilder.build(api: AdHocAPI(path: "/items"), service: service, params: params)
        #expect(request.head.scheme == "http")
        #expect(request.head.authority == "127.0.0.1:8080")
        #expect(
            request.head.path
                == "/api/items?app=1&city=sh&n=3&none=&ok=true&tags=%E6%96%B0&tags=x%26y&z=a%20b%2Bc")
        #expect(request.body == nil)
    }

    @Test("the same params in any order give the same request")
    func stableOrder() throws {
        var first: Parameters = [:]
        var second: Parameters = [:]
        for key in (0..<50).map({ "k\($0)" }) { first[key] = .string(key) }
        for key in (0..<50).map({ "k\($0)" }).reversed() { second[key] = .string(key) }
        let a = try RequestBuilder.build(api: AdHocAPI(path: "x"), service: service, params: first)
        let b = try RequestBuilder.build(api: AdHocAPI(path: "x"), service: service, params: second)
        #expect(a.head.path == b.head.path)
    }

    @Test("POST sends params as a JSON body by default, or as a form when asked")
    func bodies() throws {
        let json = try RequestBuilder.build(
            api: AdHocAPI(path: "items", method: .post), service: service, params: ["b": 1, "a": "x"])
        #expect(json.head.path == "/api/items")
        #expect(json.head.headerFields[.contentType] == "application/json")
        #expect(String(decoding: json.body?.data ?? Data(), as: UTF8.self) == #"{"a":"x","app":"1","b":1,"city":"bj"}"#)

        let form = try RequestBuilder.build(
            api: AdHocAPI(path: "items", method: .post, paramEncoding: .form), service: service, params: ["q": "a b"])
        #expect(form.head.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(String(decoding: form.body?.data ?? Data(), as: UTF8.self) == "app=1&city=bj&q=a%20b")
    }

    @Test("common headers are sent and an API's own header replaces a common one")
    func headers() throws {
        var api = AdHocAPI(path: "h")
        api.headers = [.init("X-App")!: "mine"]
        let request = try RequestBuilder.build(api: api, service: service, params: [:])
        #expect(request.head.headerFields[values: .init("X-App")!] == ["mine"])
        #expect(request.head.headerFields[.accept] == "application/json")
    }

    @Test("switching the environment switches the base URL")
    func environments() throws {
        var release = service
        release.environment = .release
        let request = try RequestBuilder.build(api: AdHocAPI(path: "/p"), service: release, params: [:])
        #expect(request.head.scheme == "https")
        #expect(request.head.authority == "api.example.com")
        #expect(request.head.path?.hasPrefix("/v2/p?") == true)
    }

    @Test(
        "a base URL without an http(s) scheme or host is an invalid request",
        arguments: ["127.0.0.1:8080", "localhost:8080/api", "api.example.com", "ftp://x.example.com", "http://", ""])
    func badBaseURL(_ base: String) {
        let bad = Service(id: .test, environment: .develop, baseURLs: [.develop: base])
        #expect {
            try RequestBuilder.build(api: AdHocAPI(path: "x"), service: bad, params: [:])
        } throws: { error in
            guard case .invalidRequest = error as? RunwayError else { return false }
            return true
        }
    }

    @Test("params that cannot be encoded are refused before anything is sent")
    func unencodable() {
        #expect(throws: RunwayError.paramsUnencodable(reason: "\"x\" nests a container, which a query cannot express")) {
            try RequestBuilder.build(api: AdHocAPI(path: "x"), service: service, params: ["x": ["a": 1]])
        }
        #expect {
            try RequestBuilder.build(api: AdHocAPI(path: "x", method: .post), service: service, params: ["x": .double(.nan)])
        } throws: { error in
            guard case .paramsUnencodable = error as? RunwayError else { return false }
            return true
        }
        #expect {
            try RequestBuilder.build(api: AdHocAPI(path: "x"), service: service, params: ["x": .double(.infinity)])
        } throws: { error in
            guard case .paramsUnencodable = error as? RunwayError else { return false }
            return true
        }
    }

    @Test("unsafe bytes in an API path are percent-encoded")
    func pathEncoding() throws {
        let request = try RequestBuilder.build(api: AdHocAPI(path: "/a b/é"), service: service, params: [:])
        #expect(request.head.path?.hasPrefix("/api/a%20b/%C3%A9?") == true)
    }
}
