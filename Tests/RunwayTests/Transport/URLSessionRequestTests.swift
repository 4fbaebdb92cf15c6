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
}
