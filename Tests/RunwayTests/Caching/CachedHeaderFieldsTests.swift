import Foundation
import GRDB
import HTTPTypes
@_spi(Benchmarks) @testable import Runway
import RunwayNIO
import RunwayTestSupport
import Testing

/// What a cached answer keeps of its response's header fields, from a server Runway's authors did
/// not write (httpbin's `/response-headers` answers with the fields it is asked for).
@Suite("Header fields of a cached answer", .timeLimit(.minutes(10)))
struct CachedHeaderFieldsTests {
    /// URLSession joins repeated fields into one (`HTTPURLResponse.allHeaderFields` is a
    /// dictionary, on every platform): the cache keeps what the transport delivered.
    @Test(
        "a cached answer keeps repeated fields as the transport delivered them, in order, and never a Set-Cookie — in SQLite and after a relaunch",
        arguments: TransportKind.allCases)
    func keptAndRefused(_ kind: TransportKind) async throws {
        let root = try CacheRoot()
        try await withHTTPBin { bin in
            let nio = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
            let transport: any Transport = nio ?? URLSessionTransport()
            try await withCleanup({ try? await nio?.shutdown() }) {
                var api = AdHocAPI(path: "/response-headers")
                api.cachePolicy = .memoryAndDisk()
                // httpbin answers with a field for each value: X-Tag twice.
                let params: Parameters = ["X-Tag": ["one", "two"], "Set-Cookie": "session=abc123"]
                func engine(_ cache: ResponseCache) throws -> Engine {
                    let engine = Engine(transport: transport, cache: cache)
                    try engine.register(Service(id: .test, environment: .develop, baseURLs: [.develop: bin.baseURL]))
                    return engine
                }

                let first = try ResponseCache(container: root.container)
                let live = try await engine(first).perform(api, params: params).get()
                #expect(live.response.headerFields[.setCookie] == "session=abc123", "the live answer is the server's, whole")
                await first.waitForDiskWork()

                // A new launch: a new cache over the same container answers from disk.
                let relaunched = try ResponseCache(container: root.container)
                let cached = try await engine(relaunched).perform(api, params: params).get()
                guard case .cache(tier: .disk, _, _) = cached.origin else {
                    Issue.record("the second load must come from the disk tier, came from \(cached.origin)")
                    return
                }
                let tags = cached.response.headerFields[values: HTTPField.Name("X-Tag")!]
                #expect(tags == live.response.headerFields[values: HTTPField.Name("X-Tag")!])
                #expect(tags == (kind == .asyncHTTPClient ? ["one", "two"] : ["one, two"]), "both values, as delivered")
                #expect(cached.response.headerFields[.setCookie] == nil)
                #expect(cached.response.headerFields[.contentType] == live.response.headerFields[.contentType])
            }
        }
        // The row in SQLite holds the fields without the cookie (httpbin echoes the fields in
        // its body too, so the body and the URL do carry the value: that is the answer itself).
        let files = FileManager.default.enumerator(at: root.url, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        let database = try #require(files.first { $0.lastPathComponent == "http-cache.sqlite" })
        let rows = try await DatabaseQueue(path: database.path).read { db in
            try Data.fetchAll(db, sql: "SELECT headers FROM entry")
        }
        #expect(rows.count == 1)
        for row in rows {
            let text = String(decoding: row, as: UTF8.self).lowercased()
            #expect(text.contains("x-tag") && !text.contains("set-cookie"), "\(text)")
        }
    }

    @Test("repeated fields read back as written; bytes in no known format read as no fields")
    func otherFormats() {
        #expect(DiskCache.decodeHeaders(Data(#"{"Content-Type":"application/json","ETag":"\"v1\""}"#.utf8)).isEmpty)
        let link = HTTPField.Name("Link")!
        var written = HTTPFields()
        written[.contentType] = "text/plain"
        written.append(HTTPField(name: link, value: "<a>"))
        written.append(HTTPField(name: link, value: "<b>"))
        let current = DiskCache.decodeHeaders(DiskCache.encodeHeaders(written))
        #expect(current[values: link] == ["<a>", "<b>"])
        #expect(current == written)
        #expect(DiskCache.decodeHeaders(Data("not json".utf8)).isEmpty)
    }

    @Test("headers are stored as name NUL value NUL: read back in order; damage loses only the damaged field")
    func compactFormat() {
        let link = HTTPField.Name("Link")!
        var written = HTTPFields()
        written[.contentType] = "application/json"
        written.append(HTTPField(name: link, value: "<a>"))
        written.append(HTTPField(name: link, value: "<b>"))
        let stored = DiskCache.encodeHeaders(written)
        #expect(stored.first == DiskCache.headerFormat)
        #expect(DiskCache.decodeHeaders(stored) == written)
        #expect(DiskCache.decodeHeaders(DiskCache.encodeHeaders(HTTPFields())).isEmpty)

        #expect(DiskCache.decodeHeaders(Data(#"[["Content-Type","application/json"]]"#.utf8)).isEmpty)

        // A name HTTP does not allow is skipped with its value, a CR in a value reads as a space,
        // and a last field cut short is dropped.
        let damaged = DiskCache.decodeHeaders(Data([DiskCache.headerFormat] + Array("bad name\0x\0ETag\0\"v\r1\"\0Content-Type\0text".utf8)))
        #expect(damaged.count == 1)
        #expect(damaged[.eTag] == "\"v 1\"")
    }
}
