import Foundation
import HTTPTypes
import RunwayTestSupport
import Testing
@testable import Runway

/// Which loads may share one request in flight: the same call, and only the same call.
@Suite("Flight keys: identical loads share, any difference does not", .timeLimit(.minutes(10)))
struct FlightKeyTests {
    let service = Service(
        id: .test, environment: .develop, baseURLs: [.develop: "http://127.0.0.1:8080/v1"],
        commonHeaders: [.acceptLanguage: "en"], commonParams: ["app": "5.1"])

    func key(_ api: AdHocAPI, params: Parameters = ["page": 1], service: Service? = nil) -> String? {
        FlightKey(api: api, service: service ?? self.service, params: params, body: nil, hooks: TransferHooks())?.text
    }

    @Test("the same call makes the same key, with params in any order")
    func sameCall() throws {
        let api = AdHocAPI(path: "/listings")
        let first = try #require(key(api, params: ["page": 1, "size": 20]))
        #expect(key(api, params: ["size": 20, "page": 1]) == first)
        #expect(first.hasPrefix("runway-flight-3|"))
        // Never mistaken for a cache key's digest, which shares the coalescer.
        #expect(first.utf8.count != 64 || !first.utf8.allSatisfy { RequestSignature.hexValue($0) != nil })
    }

    @Test("a difference in any part makes another key")
    func everyPartCounts() throws {
        let base = AdHocAPI(path: "/listings")
        var variants: [AdHocAPI] = []
        var api = base
        api.path = "/listing"
        variants.append(api)
        api = base
        api.name = "Other"
        variants.append(api)
        api = base
        api.method = .head
        variants.append(api)
        api = base
        api.headers = [.accept: "text/plain"]
        variants.append(api)
        api = base
        api.timeout = .seconds(30)
        variants.append(api)
        api = base
        api.totalTimeout = .seconds(300)
        variants.append(api)
        api = base
        api.maximumResponseSize = 1 << 20
        variants.append(api)
        api = base
        api.responseFormat = .raw
        variants.append(api)
        var keys = try [#require(key(base))]
        for variant in variants { keys.append(try #require(key(variant))) }
        keys.append(try #require(key(base, params: ["page": 2])))
        keys.append(try #require(key(base, params: ["page": "1"])))
        var otherService = service
        otherService.environment = .release
        otherService.baseURLs[.release] = "http://127.0.0.1:8080/v1"
        keys.append(try #require(key(base, service: otherService)))
        otherService = service
        otherService.commonHeaders[.acceptLanguage] = "de"
        keys.append(try #require(key(base, service: otherService)))
        #expect(Set(keys).count == keys.count)
    }

    @Test("parts that read the same run together still make two keys")
    func partsStayApart() throws {
        var first = AdHocAPI(path: "/ab")
        first.name = "c"
        var second = AdHocAPI(path: "/a")
        second.name = "bc"
        let one = try #require(key(first))
        let other = try #require(key(second))
        #expect(one != other)
        // A header value that holds what a separator and the next field would look like.
        var crafted = AdHocAPI(path: "/listings")
        crafted.headers = [.accept: "a|6:x-more|1:b"]
        var plain = AdHocAPI(path: "/listings")
        plain.headers = [.accept: "a", try #require(HTTPField.Name("x-more")): "b"]
        #expect(key(crafted) != key(plain))
    }

    @Test("loads of two sign-ins never share a key")
    func signInsApart() throws {
        let authentication = Authentication(KeyAndTokenAuthenticator())
        var service = self.service
        service.credentials.authentication = authentication
        let api = AdHocAPI(path: "/me")
        let before = try #require(key(api, service: service))
        authentication.reset()
        #expect(key(api, service: service) != before)
    }

    @Test("a body, a transfer's hooks or an API that opts out share nothing")
    func notShared() {
        var api = AdHocAPI(path: "/listings")
        #expect(
            FlightKey(api: api, service: service, params: [:], body: .data(Data("x".utf8), contentType: "text/plain"), hooks: TransferHooks())
                == nil)
        var hooks = TransferHooks()
        hooks.prepare = { _ in }
        #expect(FlightKey(api: api, service: service, params: [:], body: nil, hooks: hooks) == nil)
        api.method = .post
        #expect(key(api) == nil)
        api.method = .get
        api.sharesIdenticalLoads = false
        #expect(key(api) == nil)
    }
}
