import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
@testable import Runway
import Testing

/// The request ``URLSessionTransport`` hands to URLSession, against what URLSession's own
/// setters make of the same request.
@Suite("URLSession transport: the request as URLSession takes it", .timeLimit(.minutes(1)))
struct URLSessionRequestTests {
    /// The entries with their names lowercased: URLSession compares names without case, and
    /// `addValue` capitalizes them.
    func byLowercasedName(_ entries: [String: String]) -> [String: String] {
        Dictionary(entries.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("the header entries are what addValue line by line makes: repeated names joined, cookies one line")
    func headerEntries() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "application/json"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Tag")), value: "one"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("x-tag")), value: "two"))
        fields.append(HTTPField(name: .cookie, value: "a=1"))
        fields.append(HTTPField(name: .authorization, value: "Bearer t"))
        fields.append(HTTPField(name: .cookie, value: "b=2"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Empty")), value: ""))
        var lineByLine = URLRequest(url: try #require(URL(string: "http://127.0.0.1/")))
        for line in fields.headerLines { lineByLine.addValue(line.value, forHTTPHeaderField: line.name) }

        let entries = URLSessionTransport.headerDictionary(fields)
        #expect(byLowercasedName(entries) == byLowercasedName(lineByLine.allHTTPHeaderFields ?? [:]))
        #expect(entries.count == 5)
        #expect(entries["X-Tag"] == "one,two")
        #expect(entries["Cookie"] == "a=1; b=2")
        #expect(entries["X-Empty"] == "")
    }

    @Test("the method, URL, timeout and fields of the request URLSession is given", arguments: ["GET", "POST", "PURGE"])
    func request(_ method: String) throws {
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        let request = TransportRequest(
            head: HTTPRequest(
                method: try #require(HTTPRequest.Method(method)), scheme: "http", authority: "127.0.0.1:8080",
                path: "/a%20b?x=1", headerFields: fields),
            body: nil, timeout: .seconds(20), apiName: "Request")
        let made = try URLSessionTransport.urlRequest(for: request)
        #expect(made.httpMethod == method)
        #expect(made.url?.absoluteString == "http://127.0.0.1:8080/a%20b?x=1")
        #expect(made.timeoutInterval == 21)
        #expect(made.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(made.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(made.httpBody == nil)
    }

    @Test("the session: no cache, cookies or credential store whatever the app's configuration says; the rest kept")
    func sessionConfiguration() throws {
        let apps = URLSessionConfiguration.default
        apps.httpMaximumConnectionsPerHost = 3
        apps.timeoutIntervalForResource = 42
        apps.httpAdditionalHeaders = ["X-App": "1"]
        let made = URLSessionTransport.sessionConfiguration(apps)
        #expect(made !== apps)
        #expect(made.urlCache == nil)
        #expect(made.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(made.httpCookieStorage == nil)
        #expect(made.httpShouldSetCookies == false)
        #expect(made.httpCookieAcceptPolicy == .never)
        #expect(made.urlCredentialStorage == nil)
        #expect(made.httpMaximumConnectionsPerHost == 3)
        #expect(made.timeoutIntervalForResource == 42)
        #expect(made.httpAdditionalHeaders?["X-App"] as? String == "1")
        // The app's own configuration is left as it was.
        #expect(apps.urlCache != nil)
        #expect(apps.httpCookieStorage != nil)
        #expect(apps.urlCredentialStorage != nil)

        // The transport's own session is made from it.
        let session = URLSessionTransport(configuration: apps).session.configuration
        #expect(session.urlCache == nil)
        #expect(session.httpCookieStorage == nil)
        #expect(session.httpShouldSetCookies == false)
        #expect(session.urlCredentialStorage == nil)
        #expect(session.httpMaximumConnectionsPerHost == 3)
    }
}
