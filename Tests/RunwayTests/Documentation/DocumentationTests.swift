import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Runway
import RunwayExamples
import RunwayDemoServer
import RunwayServer
import RunwayStorage
import RunwayTestSupport
import Testing

/// The DocC articles' code: every Swift block of every article is a snippet of a
/// `…Snippets.swift` file here (so the compiler checks it), and the snippets do what the articles
/// say, against the demo server.
@Suite("Documentation snippets", .timeLimit(.minutes(10)))
@MainActor
struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("every Swift block of every article is a compiled snippet, and every snippet is in an article")
    func articlesMatchSnippets() throws {
        let folder = Self.root.appendingPathComponent("Tests/RunwayTests/Documentation")
        var snippets: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix("Snippets.swift") {
            let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            snippets.merge(Self.snippets(in: source)) { first, _ in first }
        }
        #expect(snippets.count >= 30)
        var used: Set<String> = []
        let catalogs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
            .map { Self.root.appendingPathComponent("Sources/\($0)") }
            .flatMap { module in
                ((try? FileManager.default.contentsOfDirectory(atPath: module.path)) ?? []).filter { $0.hasSuffix(".docc") }
                    .map { module.appendingPathComponent($0) }
            }
        #expect(catalogs.count == 7, "a catalog per library product")
        var articles = 0
        for catalog in catalogs {
            for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path) where name.hasSuffix(".md") {
                articles += 1
                let text = try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)
                for block in Self.swiftBlocks(in: text) {
                    let match = snippets.first { $0.value == block }
                    #expect(match != nil, "a Swift block of \(catalog.lastPathComponent)/\(name) is not a compiled snippet:\n\(block)")
                    if let match { used.insert(match.key) }
                }
            }
        }
        #expect(articles >= 15)
        // The README's quickstart is held to the same rule (its `Package.swift` lines are a
        // manifest, not code of a target).
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let readmeBlocks = Self.swiftBlocks(in: readme).filter { !$0.hasPrefix("// Package.swift") }
        #expect(readmeBlocks.count >= 3)
        for block in readmeBlocks {
            let match = snippets.first { $0.value == block }
            #expect(match != nil, "a Swift block of README.md is not a compiled snippet:\n\(block)")
            if let match { used.insert(match.key) }
        }
        #expect(Set(snippets.keys).subtracting(used).isEmpty, "snippets no article shows: \(Set(snippets.keys).subtracting(used))")
    }

    @Test("Response caching: cache then network shows the stored answer, marked stale, then the network's")
    func cacheThenNetworkSnippet() async throws {
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            let engine = Engine(transport: URLSessionTransport(), cache: try ResponseCache())
            try engine.register(listingService(baseURL: server.baseURL))
            let manager = APIManager(FreshListingsAPI(), engine: engine)
            var stale: [Bool] = []
            try await showListings(manager) { stale.append($0.origin.isStale) }
            // The demo's listings say nothing of freshness: the entry is kept, stale at once.
            try await showListings(manager) { stale.append($0.origin.isStale) }
            #expect(stale == [false, true, false])
        }
    }

    @Test("README: the quickstart's engine, with its cache, loads and reforms rentals")
    func readmeQuickstart() async throws {
        let root = try CacheRoot()
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            let engine = try await ReadmeSnippets.makeEngine(container: Container(root: root.url), developURL: server.baseURL)
            #expect(engine.cache != nil)
            let titles = try await ReadmeSnippets.loadTitles(engine: engine)
            #expect(titles.count == 20 && titles.allSatisfy { !$0.isEmpty }, "\(titles)")
            let again = try await engine.perform(RentalsAPI(), params: ["city": "sh"]).get()
            #expect(again.origin != .network, "the API's memory cache answers the second load")
            _ = RentalsViewController(engine: engine)
        }
    }

    @Test("README: the generated client lists rentals through the quickstart's engine, the second time from the cache")
    func readmeGeneratedClient() async throws {
        let root = try CacheRoot()
        let server = try await DemoServer.start()
        try await withCleanup({ await server.stop() }) {
            let engine = try await ReadmeSnippets.makeEngine(container: Container(root: root.url), developURL: server.baseURL)
            let first = try await ReadmeSnippets.listRentals(engine: engine)
            let second = try await ReadmeSnippets.listRentals(engine: engine)
            #expect(first == 20 && second == 20)
            #expect(server.probe.count("/listings/zf") == 1)
        }
    }

    @Test("Declaring APIs, Delivery, Reformers: the snippets load and shape listings")
    func declaringAndReforming() async throws {
        try await withHarness { harness in
            let all = try await ArticleSnippets.loadTags(engine: harness.engine)
            #expect(all.count == 20 && all.allSatisfy { $0.hasPrefix("¥") }, "the server's default page of 20")
            let (tags, titles) = try await ArticleSnippets.tagsAndTitles(engine: harness.engine)
            #expect(tags.count == 10 && titles.count == 10, "the API's page size of 10")
            let secret = SymmetricKey(size: .bits256)
            try ArticleSnippets.registerListings(engine: harness.engine, developURL: harness.server.baseURL, secret: secret)
            let signed = try await harness.engine.perform(HouseSearchAPI(), params: ["city": "sh"]).get()
            #expect(signed.request.headerFields[HTTPField.Name("X-Runway-Key-Id")!] == "app-2026")
            #expect(signed.request.url?.query?.contains("client=ios") == true)
            _ = HouseListController(engine: harness.engine)
            _ = RentalFilterAPI()
        }
    }

    @Test("Caching: memory, then a purge, then the disk tier")
    func caching() async throws {
        let root = try CacheRoot()
        let (engine, cache, pressure) = try ArticleSnippets.makeCachingEngine(root: root.url)
        defer { pressure.stop() }
        let server = try await DemoServer.start()
        try engine.register(listingService(baseURL: server.baseURL))
        let origins = try await withCleanup({ await server.stop() }) {
            let first = try await engine.perform(CityGuideAPI(), params: ["ts": 1]).get()
            let second = try await engine.perform(CityGuideAPI(), params: ["ts": 2]).get()
            await cache.waitForDiskWork()
            pressure.simulatePressure()
            let third = try await engine.perform(CityGuideAPI(), params: ["ts": 3]).get()
            return [first.origin, second.origin, third.origin]
        }
        let tiers = origins.map { origin -> String in
            if case .cache(let tier, _, _) = origin { return tier.rawValue }
            return "network"
        }
        #expect(tiers == ["network", "memory", "disk"])
    }

    @Test("Signing and TLS: the signer's requests pass the verifier of the snippet")
    func signing() async throws {
        let secret = SymmetricKey(size: .bits256)
        let (signer, listings, verifier) = ArticleSnippets.signingParts(secret: secret)
        #expect(listings.connection.pins.first?.scope == .leaf)
        let server = try await DemoServer.start(signatureVerifier: verifier)
        let engine = Engine(transport: URLSessionTransport())
        try engine.register(Service(id: "signed", baseURLs: [.release: server.baseURL], credentials: .init(signer: signer)))
        var api = AdHocAPI(path: "/signed/echo/check")
        api.service = "signed"
        let result = await engine.perform(api)
        await server.stop()
        #expect(try result.get().status.code == 200, "\(result)")
    }

    @Test("Storage: a versioned file in application support, in the report, backed up")
    func storage() throws {
        let root = try CacheRoot()
        let (searches, report) = try ArticleSnippets.recentSearches(root: root.url)
        #expect(searches == ["loft", "garden"])
        let support = report.roles.first { $0.role == .applicationSupport }
        #expect(support?.files.map(\.path) == ["recent-searches.json"])
        #expect(support?.files.first?.backedUp == true)
    }

    @Test("Links: the router hands a valid link to its route")
    func links() {
        let opened = TestBox<[String]>([])
        let outcome = ArticleSnippets.listingLinks { id in opened.mutate { $0.append(id) } }
        #expect(outcome == .handled(route: "open-listing"))
        #expect(opened.value == ["esf_12"])
    }

    @Test("Operation logs: a recorded event reaches the collector on flush")
    func operationLogs() async throws {
        let root = try CacheRoot()
        let store = try SQLiteOperationLogStore(url: root.url.appendingPathComponent("collector.sqlite"))
        let server = try await DemoServer.start(collector: OperationLogCollector(store: store))
        let engine = Engine(transport: URLSessionTransport())
        let stored = try await withCleanup({ await server.stop() }) {
            let log = try await ArticleSnippets.operationLog(engine: engine, collectorURL: server.baseURL, root: root.url)
            await log.close()
            return try await store.summary().events
        }
        #expect(stored == 1)
    }

    @Test("Endpoints: the selector of the snippet picks the address that answers; the engine follows the snippet's monitor")
    func endpoints() async throws {
        try await withHarness { harness in
            let selector = try ArticleSnippets.edgeService(engine: harness.engine, port: harness.server.port)
            await selector.waitForRound(after: 0)
            #expect(selector.address == "127.0.0.1")
            var api = AdHocAPI(path: "/health")
            api.service = "edge"
            let health = try await harness.engine.perform(api).get()
            #expect(health.status.code == 200)
        }
        // The engine of the snippet follows its monitor: with the path gone, a load fails at once.
        let (engine, network) = ArticleSnippets.offlineEngine(transport: URLSessionTransport())
        try engine.register(Service(id: "edge", baseURLs: [.release: "http://127.0.0.1:9"]))
        // The system's watcher stops first: other tests add and remove veth links meanwhile, and
        // each change made it read the real (reachable) path over the one set here.
        network.stop()
        network.update(.unreachable)
        var api = AdHocAPI(path: "/health")
        api.service = "edge"
        let offline = await engine.perform(api)
        guard case .failure(.noNetwork(reason: .unreachable)) = offline else {
            Issue.record("with the monitor's path unreachable the load should fail with noNetwork(.unreachable), got \(offline)")
            return
        }
    }

    /// The snippets of `source` by name, each without its common indentation.
    static func snippets(in source: String) -> [String: String] {
        var result: [String: String] = [:]
        var name: String?
        var lines: [Substring] = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// snippet: ") {
                name = String(trimmed.dropFirst("// snippet: ".count))
                lines = []
            } else if trimmed == "// end-snippet", let current = name {
                result[current] = dedent(lines)
                name = nil
            } else if name != nil {
                lines.append(line)
            }
        }
        return result
    }

    /// The ```swift blocks of a Markdown text.
    static func swiftBlocks(in text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(dedent(current ?? []))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func dedent(_ lines: [Substring]) -> String {
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.count >= indent ? String($0.dropFirst(indent)) : "" }.joined(separator: "\n")
            .trimmingCharacters(in: .newlines)
    }
}
