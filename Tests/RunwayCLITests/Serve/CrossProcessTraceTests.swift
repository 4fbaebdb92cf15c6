import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OTel
@testable import Runway
import RunwayNIO
import RunwayTestSupport
import ServiceLifecycle
import Testing
import Tracing

/// One trace from a tap in the app to the collector's insert in `runway serve`, another process:
/// both export their spans by OTLP/HTTP (swift-otel) to a receiver this test runs.
@Suite("Traces across processes", .timeLimit(.minutes(10)))
struct CrossProcessTraceTests {
    /// A span as an OTLP/HTTP JSON export carried it.
    struct ReceivedSpan: Sendable {
        var service: String
        var traceID: String
        var spanID: String
        var parentSpanID: String
        var name: String
        var attributes: [String: String]
    }

    /// Spans received, and waits for a set of them to arrive.
    actor Inbox {
        private(set) var spans: [ReceivedSpan] = []
        private var waiters: [(condition: @Sendable ([ReceivedSpan]) -> Bool, continuation: CheckedContinuation<[ReceivedSpan], Never>)] = []

        func add(_ received: [ReceivedSpan]) {
            spans += received
            let spans = self.spans
            waiters.removeAll { waiter in
                guard waiter.condition(spans) else { return false }
                waiter.continuation.resume(returning: spans)
                return true
            }
        }

        func wait(until condition: @escaping @Sendable ([ReceivedSpan]) -> Bool) async -> [ReceivedSpan] {
            if condition(spans) { return spans }
            return await withCheckedContinuation { waiters.append((condition, $0)) }
        }
    }

    /// The spans of one OTLP/HTTP JSON export (`ExportTraceServiceRequest`): ids are base64 in
    /// protobuf's JSON mapping, as swift-otel writes them, and hex in OTLP's; both are read.
    static func spans(in body: Data) -> [ReceivedSpan] {
        guard let root = try? JSON(parsing: body), let resources = root["resourceSpans"]?.arrayValue else { return [] }
        var spans: [ReceivedSpan] = []
        for resource in resources {
            let service = attributes(resource["resource"]?["attributes"])["service.name"] ?? ""
            for scope in resource["scopeSpans"]?.arrayValue ?? [] {
                for span in scope["spans"]?.arrayValue ?? [] {
                    spans.append(
                        ReceivedSpan(
                            service: service, traceID: hex(span["traceId"]), spanID: hex(span["spanId"]),
                            parentSpanID: hex(span["parentSpanId"]), name: span["name"]?.stringValue ?? "",
                            attributes: attributes(span["attributes"])))
                }
            }
        }
        return spans
    }

    static func attributes(_ list: JSON?) -> [String: String] {
        var attributes: [String: String] = [:]
        for item in list?.arrayValue ?? [] {
            guard let key = item["key"]?.stringValue, case .object(let value)? = item["value"], let first = value.values.first else { continue }
            attributes[key] = first.stringValue ?? first.intValue.map(String.init) ?? "\(first)"
        }
        return attributes
    }

    static func hex(_ value: JSON?) -> String {
        guard let text = value?.stringValue, !text.isEmpty else { return "" }
        if text.count == 32 || text.count == 16, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
        guard let bytes = Data(base64Encoded: text) else { return text }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Runs an OTLP/HTTP receiver on 127.0.0.1 until `body` returns.
    static func withReceiver<T>(_ body: (String, Inbox) async throws -> T) async throws -> T {
        let inbox = Inbox()
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            await inbox.add(spans(in: Data(buffer: body)))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        let (ports, sink) = AsyncStream<Int?>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                sink.yield(channel.localAddress?.port)
                sink.finish()
            })
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: Logger(label: "otlp")))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() ?? nil else {
            running.cancel()
            throw RunwayError.invalidRequest(reason: "the OTLP receiver did not start")
        }
        return try await withCleanup({
            await group.triggerGracefulShutdown()
            _ = await running.result
        }) {
            try await body("http://127.0.0.1:\(port)", inbox)
        }
    }

    @Test("a tap in the app, its load, the request, runway serve's request span, the verifier's check and the collector's insert: one trace")
    func oneTraceAcrossProcesses() async throws {
        try await Self.withReceiver { receiver, inbox in
            let (process, baseURL, banner) = try await startServe(["--trace-to", receiver]) {
                $0.contains("Signatures verified")
            }
            defer { process.terminate() }
            let hex = try #require(banner.last?.components(separatedBy: "secret ").last?.split(separator: " ").first.map(String.init))
            let secret = SymmetricKey(data: try #require(RequestSignature.bytes(fromHex: hex)))

            var configuration = OTel.Configuration.default
            configuration.serviceName = "runway-app"
            configuration.logs.enabled = false
            configuration.metrics.enabled = false
            configuration.diagnosticLogLevel = .error
            configuration.traces.otlpExporter.endpoint = receiver + "/v1/traces"
            configuration.traces.otlpExporter.protocol = .httpJSON
            configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(100)
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            let tracer = backend.factory
            let service = backend.service
            let exporting = Task { try await service.run() }
            let transport = AsyncHTTPClientTransport()
            try await withCleanup({
                exporting.cancel()
                _ = await exporting.result
                try? await transport.shutdown()
            }) {
                let engine = Engine(transport: transport, metrics: nil, tracer: tracer)
                try engine.register(
                    Service(
                        id: .test, environment: .develop, baseURLs: [.develop: baseURL],
                        credentials: .init(signer: HMACSigner(keyID: "runway-demo-2026", secret: secret))))
                var upload = AdHocAPI(path: "/oplog/batches", method: .post, name: "TracedUploadAPI")
                upload.headers = [.contentEncoding: "gzip"]
                let batch = try Gzip.compress(
                    Data(#"{"events":[{"id":"\#(UUID().uuidString)","name":"tap","time":1700000000000,"payload":{}}]}"#.utf8))
                let tap = tracer.startAnySpan("tap")
                let answer = await ServiceContext.withValue(tap.context) {
                    await engine.perform(upload, body: .data(batch, contentType: "application/json"))
                }
                tap.end()
                #expect(answer.map(\.status.code) == .success(200))
                // Both processes export a batch at most 100–200 ms after a span ends.

                let names: Set<String> = ["tap", "TracedUploadAPI", "POST", "/oplog/batches", "verify signature", "collector insert"]
                let spans = await inbox.wait { spans in names.isSubset(of: Set(spans.map(\.name))) }
                func span(_ name: String) throws -> ReceivedSpan {
                    guard let found = spans.first(where: { $0.name == name }) else {
                        throw RunwayError.invalidResponse(reason: "no span \(name)")
                    }
                    return found
                }
                let tapSpan = try span("tap")
                let load = try span("TracedUploadAPI")
                let request = try span("POST")
                let server = try span("/oplog/batches")
                let verify = try span("verify signature")
                let insert = try span("collector insert")
                // One trace id from the tap to the insert, each span under the right parent.
                for other in [load, request, server, verify, insert] { #expect(other.traceID == tapSpan.traceID, "\(other.name)") }
                #expect(tapSpan.traceID.count == 32)
                #expect(load.parentSpanID == tapSpan.spanID)
                #expect(server.parentSpanID == request.spanID)
                #expect(verify.parentSpanID == server.spanID)
                #expect(insert.parentSpanID == server.spanID)
                #expect(["tap", "TracedUploadAPI", "POST"].allSatisfy { name in spans.first { $0.name == name }?.service == "runway-app" })
                #expect(server.service == "runway-serve" && insert.service == "runway-serve")
                #expect(server.attributes["http.response.status_code"] == "200")
                #expect(request.attributes["http.response.status_code"] == "200")
                #expect(verify.attributes["runway.verifier.outcome"] == "admitted")
                #expect(insert.attributes["runway.collector.new"] == "1")
                // No attribute of any span, in either process, holds the secret or a signature.
                for received in spans {
                    for (key, value) in received.attributes {
                        #expect(!value.contains(hex) && !value.lowercased().contains("signature"), "\(received.name).\(key) = \(value)")
                    }
                }
            }
        }
    }
}
