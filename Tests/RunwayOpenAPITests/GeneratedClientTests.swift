import Foundation
import HTTPTypes
import OpenAPIRuntime
import Runway
import RunwayDemoClient
import RunwayDemoServer
import RunwayExamples
import RunwayOpenAPI
import RunwayServer
import RunwayTestSupport
import Testing

/// A client made by swift-openapi-generator from `OpenAPI/runway-demo.yaml`, its operations run
/// through Runway over real HTTP on both transports: what a hand-written API gets, it gets.
@Suite("A generated OpenAPI client through Runway", .timeLimit(.minutes(10)))
struct GeneratedClientTests {
    @Test("20 calls refused together renew the credential once, and all 20 get the account", arguments: TransportKind.allCases)
    func oneRefreshForTwenty(_ kind: TransportKind) async throws {
        // Each call its own request: identical GETs in flight would otherwise share one.
        try await withGeneratedClient(kind, policies: ["me": OperationPolicy(sharesIdenticalLoads: false)]) { fixture in
            let client = fixture.client
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await client.me().ok.body.json.data.token } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(tokens == Array(repeating: "access-1", count: 20))
            #expect(fixture.server.probe.count("/auth/token") == 1, "one refresh")
            #expect(fixture.server.probe.count("/auth/me") == 20)
            #expect((1...20).contains(fixture.server.probe.count("/auth/me/refused")))
        }
    }

    @Test("requests are signed with the service's signer and pass the server's verifier; unsigned ones are refused",
          arguments: TransportKind.allCases)
    func signedAndVerified(_ kind: TransportKind) async throws {
        let verifier = SignatureVerifier<ServerRequestContext>(keys: ["ios-app": [GeneratedClientFixture.secret]])
        let signer = HMACSigner(keyID: "ios-app", secret: GeneratedClientFixture.secret)
        try await withGeneratedClient(kind, verifier: verifier, signer: signer) { fixture in
            let posted = try await fixture.client.signedEchoPost(
                path: .init(name: "note"), body: .json(.init(text: "多", stars: 5))
            ).ok.body.json
            #expect(posted.method == "POST" && posted.path == "/signed/echo/note")
            #expect(posted.headers.additionalProperties["x-runway-signature"] != nil)
            let sentBody = try JSON(parsing: Data(posted.body.utf8))
            #expect(sentBody == ["text": "多", "stars": 5], "the body the signature covers")
            let fetched = try await fixture.client.signedEchoGet(path: .init(name: "listing"), query: .init(id: 7)).ok.body.json
            #expect(fetched.query == "id=7")
            #expect(fixture.server.probe.count("/echo") == 2)

            // The same operation from a service without the signer: the verifier refuses it, and
            // the refusal reaches the generated client as the documented 401.
            try fixture.engine.register(Service(id: "unsigned", baseURLs: [.release: fixture.server.baseURL]))
            let unsigned = try Client(
                serverURL: Servers.Server1.url(), transport: RunwayClientTransport(engine: fixture.engine, service: "unsigned"))
            let refused = try await unsigned.signedEchoGet(path: .init(name: "listing"))
            guard case .unauthorized = refused else {
                Issue.record("an unsigned request must be refused, got \(refused)")
                return
            }
            #expect(fixture.server.probe.count("/echo") == 2)
        }
    }

    @Test("an operation whose policy caches is answered from the cache; another query is another entry",
          arguments: TransportKind.allCases)
    func answeredFromTheCache(_ kind: TransportKind) async throws {
        // Listings are the same for everyone: sent without the credential, so that they may be
        // kept (an answer to a request with a credential is kept only per user).
        let cached = OperationPolicy(cachePolicy: .memory(lifetime: .seconds(600)), authenticates: false)
        try await withGeneratedClient(kind, policies: ["listListings": cached]) { fixture in
            let input = Operations.ListListings.Input(path: .init(kind: .esf), query: .init(page: 2, pageSize: 5))
            let first = try await fixture.client.listListings(input).ok.body.json
            let second = try await fixture.client.listListings(input).ok.body.json
            #expect(first == second)
            #expect(first.data?.items.count == 5 && first.data?.page == 2, "the query reached the server")
            #expect(fixture.server.probe.count("/listings/esf") == 1)
            _ = try await fixture.client.listListings(path: .init(kind: .esf), query: .init(page: 3, pageSize: 5)).ok
            #expect(fixture.server.probe.count("/listings/esf") == 2)
            let origins = fixture.recorder.loads.filter { $0.apiName == "listListings" }.map(\.outcome)
            #expect(origins == [.network(status: 200), .cache(tier: .memory, isStale: false), .network(status: 200)])
        }
    }

    @Test("identical calls in flight share one request", arguments: TransportKind.allCases)
    func coalesced(_ kind: TransportKind) async throws {
        try await withGeneratedClient(kind) { fixture in
            let watch = JoinWatch()
            watch.install(on: fixture.engine)
            let client = fixture.client
            let calls = Task {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<10 { group.addTask { try await client.gate(path: .init(key: "together")).ok.body.json.data.gate } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            await watch.wait(for: 10)
            fixture.server.probe.openGate("together")
            let gates = try await calls.value
            #expect(gates == Array(repeating: "together", count: 10))
            #expect(fixture.server.probe.count("/faults/gate/together") == 1)
        }
    }

    @Test("retries follow the operation's policy; what is left reaches the generated client with its header fields",
          arguments: TransportKind.allCases)
    func retriedPerPolicy(_ kind: TransportKind) async throws {
        let retrying = OperationPolicy(retryPolicy: RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(1)))
        try await withGeneratedClient(kind, policies: ["flaky": retrying]) { fixture in
            let attempt = try await fixture.client.flaky(query: .init(key: "twice", failures: 2)).ok.body.json.data.attempt
            #expect(attempt == 3)
            #expect(fixture.server.probe.count("/faults/flaky/twice") == 3)

            let once = try fixture.client(policies: ["flaky": OperationPolicy(retryPolicy: .never)])
            let unavailable = try await once.flaky(query: .init(key: "once", failures: 1, retryAfter: 7))
            guard case .serviceUnavailable(let answer) = unavailable else {
                Issue.record("expected the documented 503, got \(unavailable)")
                return
            }
            #expect(answer.headers.retryAfter == "7")
            #expect(fixture.server.probe.count("/faults/flaky/once") == 1)
            let teapot = try await once.flaky(query: .init(key: "teapot", failures: 1, status: 418))
            guard case .default(statusCode: 418, _) = teapot else {
                Issue.record("expected the default answer with 418, got \(teapot)")
                return
            }
        }
    }

    @Test("every exchange is recorded under its operationID, and the HAR file says so", arguments: TransportKind.allCases)
    func recordedInHAR(_ kind: TransportKind) async throws {
        try await withGeneratedClient(kind, policies: ["me": OperationPolicy(sharesIdenticalLoads: false)]) { fixture in
            _ = try await fixture.client.listListings(path: .init(kind: .zf)).ok
            _ = try await fixture.client.me().ok
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runway-openapi-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("generated.har")
            try await fixture.recorder.writeHTTPArchive(to: file)
            let har = try JSON(parsing: Data(contentsOf: file))
            let entries = har["log"]?["entries"]?.arrayValue ?? []
            let names = entries.compactMap { $0["_runway"]?["api"]?.stringValue }
            // The refused /auth/me, the token request, /auth/me again.
            #expect(names == ["listListings", "me", RefreshTokenAPI().name, "me"])
            #expect(entries.compactMap { $0["response"]?["status"]?.intValue } == [200, 401, 200, 200])
            #expect(fixture.recorder.loads.map(\.apiName) == ["listListings", RefreshTokenAPI().name, "me"])
        }
    }

    @Test("StubTransport answers a generated client by operationID, with nothing on the wire")
    func stubbed() async throws {
        let page: JSON = ["items": [["esf_id": 1, "esf_name": "Stubbed"]], "page": 1, "page_size": 1, "total": 1, "has_more": false]
        let stub = StubTransport(sampleData: [
            "listListings": .json(["code": 0, "data": page]),
            "me": .failure(.noNetwork(reason: .unreachable)),
        ])
        let engine = Engine(transport: stub)
        try engine.register(Service(id: "demo", baseURLs: [.release: "https://api.example.com"]))
        let client = try Client(
            serverURL: Servers.Server1.url(),
            transport: RunwayClientTransport(engine: engine, service: "demo", defaultPolicy: OperationPolicy(retryPolicy: .never)))
        let listed = try await client.listListings(path: .init(kind: .esf)).ok.body.json.data
        #expect(listed?.total == 1)
        #expect(listed?.items.first?.additionalProperties.value["esf_name"] as? String == "Stubbed")
        await #expect {
            _ = try await client.me()
        } throws: { error in
            (error as? ClientError)?.underlyingError as? RunwayError == .noNetwork(reason: .unreachable)
        }
        #expect(stub.requests.map(\.apiName) == ["listListings", "me"])
        #expect(stub.requests.first?.head.path == "/listings/esf")
    }

    @Test("a load that ends without an answer reaches the generated client as its ClientError with the RunwayError inside",
          arguments: TransportKind.allCases)
    func errorsInsideClientError(_ kind: TransportKind) async throws {
        try await withGeneratedClient(kind) { fixture in
            let gone = try await DemoServer.start()
            let goneURL = gone.baseURL
            await gone.stop()
            try fixture.engine.register(Service(id: "gone", baseURLs: [.release: goneURL]))
            let client = try Client(
                serverURL: Servers.Server1.url(),
                transport: RunwayClientTransport(
                    engine: fixture.engine, service: "gone", defaultPolicy: OperationPolicy(retryPolicy: .never)))
            await #expect {
                _ = try await client.listListings(path: .init(kind: .xf))
            } throws: { error in
                guard let clientError = error as? ClientError else { return false }
                return clientError.operationID == "listListings"
                    && clientError.underlyingError as? RunwayError == .noNetwork(reason: .connectionRefused)
            }
        }
    }

    @Test("cancelInFlight: a new call cancels the one in flight, whose caller learns it as RunwayError.cancelled",
          arguments: TransportKind.allCases)
    func cancelInFlight(_ kind: TransportKind) async throws {
        let latest = OperationPolicy(requestStrategy: .cancelInFlight)
        try await withGeneratedClient(kind, policies: ["gate": latest]) { fixture in
            let client = fixture.client
            let first = Task { try await client.gate(path: .init(key: "first")).ok.body.json.data.gate }
            await fixture.server.probe.wait(for: .gateWaiting)
            let second = Task { try await client.gate(path: .init(key: "second")).ok.body.json.data.gate }
            await #expect {
                _ = try await first.value
            } throws: { error in
                (error as? ClientError)?.underlyingError as? RunwayError == .cancelled
            }
            await fixture.server.probe.wait(for: .gateWaiting, count: 2)
            fixture.server.probe.openGate("second")
            let answered = try await second.value
            #expect(answered == "second")
            // The server still holds the cancelled request; it has to end for the server to stop.
            fixture.server.probe.openGate("first")
        }
    }

    @Test("ignoreNewWhileLoading: a call while one is in flight gets that one's answer", arguments: TransportKind.allCases)
    func ignoreNewWhileLoading(_ kind: TransportKind) async throws {
        try await withGeneratedClient(kind) { fixture in
            let transport = GeneratedClientFixture.transport(
                engine: fixture.engine, policies: ["gate": OperationPolicy(requestStrategy: .ignoreNewWhileLoading)])
            let watch = JoinWatch()
            watch.install(on: fixture.engine)
            let client = try Client(serverURL: Servers.Server1.url(), transport: transport)
            let first = Task { try await client.gate(path: .init(key: "first")).ok.body.json.data.gate }
            await fixture.server.probe.wait(for: .gateWaiting)
            let second = Task { try await client.gate(path: .init(key: "second")).ok.body.json.data.gate }
            // The first call and the second share one load before the gate opens.
            await watch.wait(for: 2)
            fixture.server.probe.openGate("first")
            let (firstGate, secondGate) = (try await first.value, try await second.value)
            #expect(firstGate == "first" && secondGate == "first")
            #expect(fixture.server.probe.count("/faults/gate/second") == 0, "the second call never reached the server")
        }
    }
}
