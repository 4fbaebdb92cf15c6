import AsyncHTTPClient
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import OTel
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing
import Tracing

/// Reads the echo route's answer as the header fields the server saw.
struct EchoedFields: Reformer {
    func reform(_ response: RawResponse) throws -> [String: String] {
        guard case .object(let fields)? = response.json?["headers"] else { return [:] }
        return fields.compactMapValues { $0.stringValue }
    }
}

@Suite("Traces: a span per load, children for each phase, the context on the wire", .timeLimit(.minutes(10)))
@MainActor
struct TracingTests {
    /// An engine over AsyncHTTPClient with `tracer`, the test service registered on `server`.
    static func engine(
        tracer: any Tracer, server: DemoServer, transport: any Transport, cache: ResponseCache? = nil,
        signer: (any RequestSigner)? = nil
    ) throws -> Engine {
        let engine = Engine(transport: transport, cache: cache, metrics: nil, tracer: tracer)
        try engine.register(
            Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL], credentials: .init(signer: signer)))
        return engine
    }

    @Test("a load is one span under the caller's, with the cache lookup, the attempt, each hop, the parse and the reform under it")
    func spanTree() async throws {
        let tracer = InMemoryTracer()
        try await withServer { transport, server in
            let cache = try ResponseCache()
            let engine = try Self.engine(tracer: tracer, server: server, transport: transport, cache: cache)
            var api = AdHocAPI(path: "/faults/redirect-to/302/echo/listing", name: "TracedAPI")
            api.headers = [.authorization: "Bearer s3cret-token"]
            api.cachePolicy = CachePolicy(tiers: .memory, memoryLifetime: .seconds(3600), sensitiveComponent: "user-1")
            let tap = tracer.startAnySpan("tap")
            let seen = try await ServiceContext.withValue(tap.context) {
                try await APIManager(api, engine: engine).load(with: ["token": "s3cret-query"], reformedBy: EchoedFields())
            }
            tap.end()

            let spans = tracer.finishedSpans
            let byName = Dictionary(grouping: spans, by: \.operationName)
            let tapSpan = try #require(byName["tap"]?.first)
            let load = try #require(byName["TracedAPI"]?.first)
            #expect(load.parentSpanID == tapSpan.spanID)
            #expect(Set(spans.map(\.traceID)) == [tapSpan.traceID])
            #expect(load.attributes["runway.origin"]?.toSpanAttribute() == "network")
            #expect(load.attributes["http.response.status_code"]?.toSpanAttribute() == 200)

            let lookup = try #require(byName["cache lookup"]?.first)
            #expect(lookup.parentSpanID == load.spanID)
            #expect(lookup.attributes["runway.cache.result"]?.toSpanAttribute() == "miss")
            let attempt = try #require(byName["attempt 1"]?.first)
            #expect(attempt.parentSpanID == load.spanID)
            let hops = try #require(byName["GET"]).sorted { ($0.attributes["runway.redirect.hop"]?.toSpanAttribute() == 1 ? 1 : 0) < ($1.attributes["runway.redirect.hop"]?.toSpanAttribute() == 1 ? 1 : 0) }
            #expect(hops.count == 2)
            #expect(hops.allSatisfy { $0.parentSpanID == attempt.spanID && $0.kind == .client })
            #expect(hops[0].attributes["http.response.status_code"]?.toSpanAttribute() == 302)
            #expect(hops[1].attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(hops[1].attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
            #expect(hops[0].attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
            #expect(hops[0].attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
            #expect(hops[0].attributes["url.full"]?.toSpanAttribute() == .string("\(server.baseURL)/faults/redirect-to/302/echo/listing?token=REDACTED"))
            #expect(hops[0].attributes["network.protocol.version"]?.toSpanAttribute() == "1.1")
            #expect(byName["parse"]?.first?.parentSpanID == load.spanID)
            #expect(byName["reform"]?.first?.parentSpanID == load.spanID)

            // The context went out on the wire with the request that answered: its own span's.
            #expect(seen[InMemoryTracer.traceIDKey] == tapSpan.traceID)
            #expect(seen[InMemoryTracer.spanIDKey] == hops[1].spanID)

            // No attribute of any span holds the token or the query's value.
            for span in spans {
                span.attributes.forEach { key, attribute in
                    #expect(!"\(attribute)".contains("s3cret"), "\(span.operationName).\(key) holds a credential")
                }
            }

            // Again: answered by the memory tier, no attempt, the lookup says hit.
            tracer.clearAll()
            _ = try await APIManager(api, engine: engine).load(with: ["token": "s3cret-query"], reformedBy: EchoedFields())
            let again = Dictionary(grouping: tracer.finishedSpans, by: \.operationName)
            #expect(again["cache lookup"]?.first?.attributes["runway.cache.result"]?.toSpanAttribute() == "hit")
            #expect(again["TracedAPI"]?.first?.attributes["runway.origin"]?.toSpanAttribute() == "cache")
            #expect(again["TracedAPI"]?.first?.attributes["runway.cache.tier"]?.toSpanAttribute() == "memory")
            #expect(again["attempt 1"] == nil)
        }
    }

    @Test("an app's own load number goes on the load's span: as a number up to Int64, as text past it")
    func loadNumberAttribute() async throws {
        let tracer = InMemoryTracer()
        try await withServer { transport, server in
            let engine = try Self.engine(tracer: tracer, server: server, transport: transport)
            for number in [UInt64(Int64.max), UInt64(Int64.max) + 1, .max] {
                _ = try await engine.perform(AdHocAPI(path: "/echo/\(number)", name: "Numbered"), loadID: LoadID(rawValue: number))
                    .get()
            }
            let attributes = tracer.finishedSpans.filter { $0.operationName == "Numbered" }
                .map { $0.attributes["runway.load_id"]?.toSpanAttribute() }
            #expect(attributes == [.int64(.max), .string("9223372036854775808"), .string("18446744073709551615")])
        }
    }

    @Test("the trace context goes to another origin only when the API allows it")
    func crossOrigin() async throws {
        let tracer = InMemoryTracer()
        // The second server is the other origin (its transport goes unused).
        try await withServer { transport, server in try await withServer { _, other in
            let engine = try Self.engine(tracer: tracer, server: server, transport: transport)
            var api = AdHocAPI(path: "/faults/redirect")
            api.redirectPolicy = .crossOriginWithoutCredentials
            let target = "\(other.baseURL)/echo/elsewhere"
            let kept = try await APIManager(api, engine: engine).load(with: ["to": .string(target)], reformedBy: EchoedFields())
            #expect(kept[InMemoryTracer.traceIDKey] == nil)
            api.sendsTraceContextToOtherOrigins = true
            let sent = try await APIManager(api, engine: engine).load(with: ["to": .string(target)], reformedBy: EchoedFields())
            #expect(sent[InMemoryTracer.traceIDKey] != nil)
        } }
    }

    @Test("with an OpenTelemetry tracer a W3C traceparent goes out, under the signature")
    func traceparentIsSigned() async throws {
        var configuration = OTel.Configuration.default
        configuration.traces.exporter = .none
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.diagnosticLogLevel = .error
        let tracer = try OTel.makeTracingBackend(configuration: configuration).factory
        let secret = SigningTests.secret
        try await withServer(start: { try await DemoServer.start(signatureVerifier: SignatureVerifier(keys: ["ios-app": [secret]])) }) {
            transport, server in
            let signer = HMACSigner(keyID: "ios-app", secret: secret, signedHeaderFields: [HTTPField.Name("traceparent")!])
            let tampered = Wiretap(transport) { request in
                if request.head.path?.contains("tampered") == true { request.head.headerFields[HTTPField.Name("traceparent")!] = "00-" + String(repeating: "1", count: 32) + "-" + String(repeating: "2", count: 16) + "-01" }
            }
            let engine = Engine(transport: tampered, metrics: nil, tracer: tracer)
            try engine.register(
                Service(id: .test, environment: .develop, baseURLs: [.develop: server.baseURL], credentials: .init(signer: signer)))
            let seen = try await APIManager(AdHocAPI(path: "/signed/echo/traced"), engine: engine).load(reformedBy: EchoedFields())
            let traceparent = try #require(seen["traceparent"])
            #expect(traceparent.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]/) != nil)
            #expect(seen["x-runway-signed-headers"]?.contains("traceparent") == true)
            // Changed after signing: the verifier refuses it.
            await #expect(throws: RunwayError.self) {
                try await APIManager(AdHocAPI(path: "/signed/echo/tampered"), engine: engine).load(reformedBy: EchoedFields())
            }
        }
    }

    @Test("a credential refresh is a span of the load, and the token request's load is under it")
    func refreshSpan() async throws {
        let tracer = InMemoryTracer()
        try await withServer { transport, server in
            let engine = Engine(transport: transport, metrics: nil, tracer: tracer)
            try engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: server.baseURL],
                    credentials: .init(authentication: Authentication(BearerAuthenticator(engine: engine, stored: "expired")))))
            let answer = await engine.perform(AdHocAPI(path: "/auth/me", name: "MeAPI"))
            #expect((try? answer.get())?.json?["data"]?["token"]?.stringValue == "access-1")
            let spans = Dictionary(grouping: tracer.finishedSpans, by: \.operationName)
            let load = try #require(spans["MeAPI"]?.first)
            let refresh = try #require(spans["credential refresh"]?.first)
            #expect(refresh.parentSpanID == load.spanID)
            let tokenLoad = try #require(spans.first { $0.key.hasSuffix("TokenAPI") }?.value.first)
            #expect(tokenLoad.parentSpanID == refresh.spanID)
            #expect(spans["attempt 1"]?.first { $0.parentSpanID == load.spanID }?.attributes["runway.attempt.outcome"]?.toSpanAttribute() == "credential refused")
            #expect(spans["attempt 2"]?.first?.parentSpanID == load.spanID)
            for span in tracer.finishedSpans {
                span.attributes.forEach { key, attribute in
                    #expect(!"\(attribute)".contains("access-1") && !"\(attribute)".contains("expired") && !"\(attribute)".contains("refresh-1"), "\(span.operationName).\(key)")
                }
            }
        }
    }

    @Test("AsyncHTTPClient's own span of a request nests under the request's span, and adds no second trace header")
    func asyncHTTPClientSpansNest() async throws {
        let tracer = InMemoryTracer()
        var connections = AsyncHTTPClientTransport.Connections()
        connections.tracer = tracer
        try await withServer(connections: connections) { transport, server in
            let engine = try Self.engine(tracer: tracer, server: server, transport: transport)
            let tap = tracer.startAnySpan("tap")
            let answer = await ServiceContext.withValue(tap.context) {
                await engine.perform(AdHocAPI(path: "/echo/inside"), params: ["token": "s3cret-query"])
            }
            tap.end()
            let seen = try EchoedFields().reform(try answer.get())
            // Two client spans: the engine's for the request, AsyncHTTPClient's under it.
            let attempt = try #require(tracer.finishedSpans.first { $0.operationName == "attempt 1" })
            let hop = try #require(tracer.finishedSpans.first { $0.operationName == "GET" && $0.parentSpanID == attempt.spanID })
            let own = tracer.finishedSpans.filter { $0.operationName == "GET" && $0.parentSpanID == hop.spanID }
            #expect(own.count == 1, "AsyncHTTPClient's span of the request, under it")
            #expect(Set(tracer.finishedSpans.map(\.traceID)) == [tap.context.inMemorySpanContext?.traceID])
            // One value each: the engine's, for the request's span — not a second one added by
            // AsyncHTTPClient for its own.
            #expect(seen[InMemoryTracer.spanIDKey] == hop.spanID)
            #expect(seen[InMemoryTracer.traceIDKey] == tap.context.inMemorySpanContext?.traceID)
            // AsyncHTTPClient records the URL and its query: their values arrive redacted.
            #expect(own.first?.attributes["url.query"]?.toSpanAttribute() == "token=REDACTED")
            for span in tracer.finishedSpans {
                span.attributes.forEach { key, attribute in
                    #expect(!"\(attribute)".contains("s3cret"), "\(span.operationName).\(key) holds a credential")
                }
            }
        }
    }
}
