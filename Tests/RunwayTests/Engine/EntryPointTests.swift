import Foundation
import HTTPTypes
import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// One set of verbs with the same rules: every entry point — the engine's `perform`, `upload`
/// and `download`, the manager's `load`, `upload` and `download` — runs the params validator and
/// the service's and the API's interceptors in a manager's order.
@Suite("Every entry point, the same rules", .timeLimit(.minutes(10)))
@MainActor
struct EntryPointTests {
    /// The hooks of one successful call, the service's interceptor before the API's at each.
    static let successHooks = [
        "service.shouldCall", "api.shouldCall", "service.afterCall", "api.afterCall",
        "service.didReceiveResponse", "api.didReceiveResponse", "service.beforeSuccess", "api.beforeSuccess",
        "service.afterSuccess", "api.afterSuccess",
    ]

    enum EntryPoint: String, CaseIterable, Sendable {
        case enginePerform, engineUpload, engineDownload, managerLoad, managerUpload, managerDownload
    }

    @Test("each entry point runs the service's and the API's interceptors, hook by hook", arguments: EntryPoint.allCases)
    func interceptorsOnEveryEntryPoint(_ entry: EntryPoint) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        let journal = Journal()
        try await withHarness { harness in
            try harness.registerServices(interceptors: [JournalInterceptor(tag: "service", journal: journal)])
            var api = AdHocAPI(path: entry == .engineDownload || entry == .managerDownload ? "/files/blob" : "/upload/raw")
            api.method = entry == .engineUpload || entry == .managerUpload ? .post : .get
            api.interceptors = [JournalInterceptor(tag: "api", journal: journal)]
            let manager = APIManager(api, engine: harness.engine)
            switch entry {
            case .enginePerform:
                api.path = "/echo/perform"
                _ = try await harness.engine.perform(api).get()
            case .engineUpload:
                _ = try await harness.engine.upload(api, body: .data(Data("x".utf8), contentType: "text/plain")).value
            case .engineDownload:
                _ = try await harness.engine.download(api, params: ["size": "10"], to: .caches("a.bin", in: container)).value
            case .managerLoad:
                manager.api.path = "/echo/load"
                try await manager.load()
            case .managerUpload:
                _ = try await manager.upload(.data(Data("x".utf8), contentType: "text/plain")).value
                #expect(manager.rawResponse?.json?["bytes"]?.intValue == 1, "an upload's answer is the manager's response")
            case .managerDownload:
                let file = try await manager.download(to: .caches("b.bin", in: container), with: ["size": "10"]).value
                #expect(file.byteCount == 10)
                #expect(file.request.path?.hasPrefix("/files/blob") == true)
                #expect(manager.rawResponse == nil, "a download's body is in its file, not the manager's response")
            }
            #expect(journal.entries == Self.successHooks)
        }
    }

    @Test("an answer carries the app's own API value, from the engine and from a manager")
    func answerCarriesTheAPI() async throws {
        try await withHarness { harness in
            try harness.registerServices()
            let api = AdHocAPI(path: "/echo/own")
            let performed = try await harness.engine.perform(api).get()
            #expect((performed.api as? AdHocAPI)?.path == "/echo/own")
            let manager = APIManager(api, engine: harness.engine)
            try await manager.load()
            #expect((manager.rawResponse?.api as? AdHocAPI)?.path == "/echo/own")
        }
    }

    @Test("a service interceptor's veto stops a call made on the engine: never sent, failure hooks run")
    func vetoOnTheEngine() async throws {
        let journal = Journal()
        try await withHarness { harness in
            try harness.registerServices(interceptors: [JournalInterceptor(tag: "service", journal: journal, veto: "signed out")])
            let api = AdHocAPI(path: "/faults/cacheable", retryPolicy: .never)
            let result = await harness.engine.perform(api, params: ["key": "veto"])
            #expect(result.error == .vetoed(reason: "signed out"))
            let upload = harness.engine.upload(AdHocAPI(path: "/upload/raw", method: .post), body: .data(Data("x".utf8), contentType: "text/plain"))
            await #expect(throws: RunwayError.vetoed(reason: "signed out")) { try await upload.value }
            #expect(harness.probe.count("/faults/cacheable/veto") == 0)
            #expect(harness.probe.count("/upload/raw") == 0)
            #expect(journal.entries == Array(repeating: ["service.shouldCall", "service.beforeFailure", "service.afterFailure"], count: 2).flatMap { $0 })
        }
    }

    @Test("the params validator runs on the engine's verbs: invalid params are never sent")
    func validatorOnTheEngine() async throws {
        try await withHarness { harness in
            try harness.registerServices()
            var api = AdHocAPI(path: "/faults/cacheable")
            api.paramsValidator = RequiredParams(["key"])
            let refused = await harness.engine.perform(api)
            #expect(refused.error == .paramsInvalid(reason: "\"key\" is required"))
            let (container, root) = try makeTemporaryContainer()
            defer { try? FileManager.default.removeItem(at: root) }
            var blob = AdHocAPI(path: "/files/blob")
            blob.paramsValidator = RequiredParams(["size"])
            await #expect(throws: RunwayError.paramsInvalid(reason: "\"size\" is required")) {
                try await harness.engine.download(blob, to: .caches("c.bin", in: container)).value
            }
            _ = try await harness.engine.perform(api, params: ["key": "valid"]).get()
            #expect(harness.probe.count("/faults/cacheable/default") == 0)
            #expect(harness.probe.count("/faults/cacheable/valid") == 1)
        }
    }

    @Test("a manager's download is cancelled by its load id; the server sees the close", arguments: TransportKind.allCases)
    func cancelAManagersTransfer(_ transport: TransportKind) async throws {
        let (container, root) = try makeTemporaryContainer()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withHarness(transport) { harness in
            let manager = APIManager(AdHocAPI(path: "/faults/hang"), engine: harness.engine)
            let download = manager.download(to: .caches("hang.bin", in: container))
            await harness.probe.wait(for: .holdStarted)
            #expect(manager.isLoading)
            #expect(manager.cancel(download.loadID))
            await #expect(throws: RunwayError.cancelled) { try await download.value }
            await harness.probe.wait(for: .holdClosed)
            #expect(!manager.isLoading)
        }
    }

    @Test("load(reformedBy:) takes a body and ignoringCache like load()")
    func reformedLoadHasEveryOption() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            try harness.registerServices()
            let echo = APIManager(AdHocAPI(path: "/echo/comments", method: .post), engine: harness.engine)
            let body = try await echo.load(body: .json(["text": "Nice flat"]), reformedBy: EchoField(name: "body"))
            #expect(body == #"{"text":"Nice flat"}"#)

            var cached = AdHocAPI(path: "/faults/cacheable")
            cached.cachePolicy = .memory()
            let manager = APIManager(cached, engine: harness.engine)
            let first = try await manager.load(with: ["key": "fresh"], reformedBy: Count())
            let hit = try await manager.load(with: ["key": "fresh"], reformedBy: Count())
            let refreshed = try await manager.load(with: ["key": "fresh"], ignoringCache: true, reformedBy: Count())
            #expect([first, hit, refreshed] as [Int] == [1, 1, 2])
            #expect(harness.probe.count("/faults/cacheable/fresh") == 2)
        }
    }

    // MARK: - Typed results

    struct Echoed: Decodable, Sendable, Equatable {
        var method: String
        var path: String
    }

    /// An API read as one `Decodable` value by default.
    struct EchoedAPI: API {
        var service: ServiceID { .test }
        var path: String { "/echo/typed" }
        var method: HTTPRequest.Method { .get }
        var responseFormat: ResponseFormat { .raw }
        var defaultReformer: DecodingReformer<Echoed> { .decoding(Echoed.self) }
    }

    @Test("an API's default reformer shapes what load() returns; a view's own reformer and the raw response remain", arguments: TransportKind.allCases)
    func defaultReformer(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            try harness.registerServices()
            let manager = APIManager(EchoedAPI(), engine: harness.engine)
            let echoed: Echoed = try await manager.load()
            #expect(echoed == Echoed(method: "GET", path: "/echo/typed"))
            let viaParams: Echoed = try await manager.load(with: ["page": 2])
            #expect(viaParams.path == "/echo/typed")
            let raw = try await manager.load(reformedBy: .rawResponse)
            #expect(raw.status == .ok && raw.json == nil)
            let method = try await manager.load(reformedBy: EchoBodyField(name: "method"))
            #expect(method == "GET")

            let delegate = RecordingDelegate()
            manager.delegate = delegate
            manager.loadData()
            await delegate.waitForEvents(1)
            #expect(delegate.events.first?.isSuccess == true, "the delegate still receives the raw response")
        }
    }

    @Test("a default reformer's failure is a typed invalidResponse")
    func defaultReformerFailure() async throws {
        struct WrongShapeAPI: API {
            var service: ServiceID { .test }
            var path: String { "/echo/wrong" }
            var method: HTTPRequest.Method { .get }
            var defaultReformer: DecodingReformer<[Int]> { .decoding([Int].self) }
        }
        try await withHarness { harness in
            try harness.registerServices()
            await #expect {
                try await APIManager(WrongShapeAPI(), engine: harness.engine).load()
            } throws: { error in
                guard case .invalidResponse(let reason) = error as? RunwayError else { return false }
                return reason.contains("DecodingReformer")
            }
        }
    }

    // MARK: - Encodable params

    struct SearchQuery: Encodable, Sendable {
        var city: String
        var page: Int
        var note: String?
    }

    @Test("Encodable params go into the query or the body like Parameters, a nil member left out", arguments: TransportKind.allCases)
    func encodableParams(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            try harness.registerServices()
            let get = APIManager(AdHocAPI(path: "/echo/search"), engine: harness.engine)
            let query = try await get.load(with: SearchQuery(city: "sh", page: 2), reformedBy: EchoField(name: "query"))
            #expect(query.split(separator: "&").sorted() == ["city=sh", "page=2"])

            let post = APIManager(AdHocAPI(path: "/echo/search", method: .post), engine: harness.engine)
            let body = try await post.load(with: SearchQuery(city: "sh", page: 2, note: "南"), reformedBy: EchoField(name: "body"))
            #expect(try JSON(parsing: Data(body.utf8)) == ["city": "sh", "page": 2, "note": "南"])

            let engineResult = try await harness.engine.perform(AdHocAPI(path: "/echo/engine"), params: SearchQuery(city: "bj", page: 1)).get()
            #expect(engineResult.json?["query"]?.stringValue?.contains("city=bj") == true)
        }
    }

    @Test("Encodable params are validated and keyed in the cache exactly as the same Parameters")
    func encodableParamsShareRules() async throws {
        try await withHarness(cache: try ResponseCache()) { harness in
            try harness.registerServices()
            var api = AdHocAPI(path: "/faults/cacheable")
            api.cachePolicy = .memory()
            api.paramsValidator = ParamsValidation { params throws(ValidationFailure) in
                if (params["page"]?.intValue ?? 0) > 10 { throw ValidationFailure("page is past the end") }
            }
            struct Keyed: Encodable, Sendable { var key: String; var page: Int }
            let manager = APIManager(api, engine: harness.engine)
            let typed = try await manager.load(with: Keyed(key: "typed", page: 1), reformedBy: Count())
            let plain = try await manager.load(with: ["key": "typed", "page": 1], reformedBy: Count())
            #expect([typed, plain] as [Int] == [1, 1], "one cache entry for the value and the equal Parameters")
            #expect(harness.probe.count("/faults/cacheable/typed") == 1)
            await #expect(throws: RunwayError.paramsInvalid(reason: "page is past the end")) {
                try await manager.load(with: Keyed(key: "typed", page: 11), ignoringCache: true)
            }
            #expect(harness.probe.count("/faults/cacheable/typed") == 1)
        }
    }

    @Test("a value that is not an object of named params is a typed refusal, delivered once and never sent")
    func encodableParamsMustBeAnObject() async throws {
        try await withHarness { harness in
            try harness.registerServices()
            let manager = APIManager(AdHocAPI(path: "/faults/cacheable"), engine: harness.engine)
            let delegate = RecordingDelegate()
            manager.delegate = delegate
            #expect(manager.loadData(with: ["a", "b"] as [String]) != nil)
            await delegate.waitForEvents(1)
            guard case .paramsInvalid(let reason)? = delegate.events.first?.error else {
                Issue.record("expected paramsInvalid, got \(String(describing: delegate.events.first))")
                return
            }
            #expect(reason.contains("does not encode to an object"))
            await #expect(throws: RunwayError.self) { try await manager.load(with: 42) }
            let journal = Journal()
            var watched = AdHocAPI(path: "/faults/cacheable")
            watched.interceptors = [JournalInterceptor(tag: "api", journal: journal)]
            let engineResult = await harness.engine.perform(watched, params: "text")
            guard case .paramsInvalid? = engineResult.error else {
                Issue.record("expected paramsInvalid from the engine")
                return
            }
            #expect(journal.entries == ["api.beforeFailure", "api.afterFailure"], "the refusal runs the failure hooks once")
            #expect(harness.probe.count("/faults/cacheable/default") == 0)
        }
    }
}

/// One string member of the echo route's answer.
struct EchoField: Reformer {
    var name: String
    func reform(_ response: RawResponse) throws -> String {
        guard let value = response.json?[name]?.stringValue else { throw RunwayError.invalidResponse(reason: "no \(name)") }
        return value
    }
}

/// One string member of the echo route's answer, read from the bytes (for raw APIs).
struct EchoBodyField: Reformer {
    var name: String
    func reform(_ response: RawResponse) throws -> String {
        guard let value = try JSON(parsing: response.body)[name]?.stringValue else {
            throw RunwayError.invalidResponse(reason: "no \(name)")
        }
        return value
    }
}

/// The count of the cacheable route.
struct Count: Reformer {
    func reform(_ response: RawResponse) throws -> Int {
        guard let count = response.payload?["count"]?.intValue else { throw RunwayError.invalidResponse(reason: "no count") }
        return count
    }
}
