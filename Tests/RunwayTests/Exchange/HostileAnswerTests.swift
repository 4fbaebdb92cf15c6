import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
@testable import Runway
import RunwayTestSupport
import Testing

/// Answers a server may send that no client should trust: each ends in a typed outcome, never a
/// trap, over both transports.
@Suite("Hostile answers end in typed outcomes", .timeLimit(.minutes(10)))
struct HostileAnswerTests {
    @Test(
        "a clock-skew challenge naming a time no clock can be is not learnt: the 401 lands, later signatures keep the device's time",
        arguments: TransportKind.allCases)
    func absurdServerTime(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            let signer = HMACSigner(keyID: "k", secret: SymmetricKey(size: .bits256))
            try harness.engine.register(
                Service(
                    id: .test, environment: .develop, baseURLs: [.develop: harness.server.baseURL],
                    credentials: .init(signer: signer)))
            for absurd in ["9223372036854775807", "-9223372036854775808", "\(Int(Date().timeIntervalSince1970) + 30 * 86_400)"] {
                let result = await harness.engine.perform(AdHocAPI(path: "/faults/skewed"), params: ["server_time": .string(absurd)])
                guard case .failure(.httpStatus(401, _)) = result else {
                    Issue.record("\(absurd): \(result)")
                    continue
                }
            }
            #expect(harness.probe.count("/faults/skewed") == 3, "each sent once: nothing learnt, nothing signed again")
            let echoed = try await harness.engine.perform(AdHocAPI(path: "/echo/after")).get()
            let stamp = try #require(echoed.json?["headers"]?["x-runway-timestamp"]?.stringValue.flatMap(Int64.init))
            #expect(abs(stamp - Int64(Date().timeIntervalSince1970)) < 3600, "the offset was left as it was")
        }
    }

    @Test("a HEAD of a file larger than the API's limit succeeds: no body follows it", arguments: TransportKind.allCases)
    func largeHead(_ kind: TransportKind) async throws {
        try await withHarness(kind) { harness in
            var head = AdHocAPI(path: "/faults/large-head", method: .head)
            head.maximumResponseSize = 1 << 20
            head.responseFormat = .raw
            let response = try await harness.engine.perform(head).get()
            #expect(response.status.code == 200)
            #expect(response.response.headerFields[.contentLength] == "41943040")
            #expect(response.body.isEmpty)
        }
    }

    @Test("Retry-After as an HTTP date is a wait until then", arguments: TransportKind.allCases)
    func retryAfterDate(_ kind: TransportKind) async throws {
        let waits = TestBox<[Duration]>([])
        try await withHarness(kind, sleep: { wait in waits.mutate { $0.append(wait) } }) { harness in
            var api = AdHocAPI(path: "/faults/flaky")
            // A date far enough ahead that a slow machine's seconds on the way cannot bring it near.
            api.retryPolicy = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(1), maximumDelay: .seconds(600), jitter: 0)
            let when = imfFixdate(Date().addingTimeInterval(300))
            _ = try await harness.engine.perform(
                api, params: ["key": .string(UUID().uuidString), "failures": 1, "retry_after": .string(when)]
            ).get()
            let wait = try #require(waits.value.first)
            #expect(wait > .seconds(200) && wait <= .seconds(300), "\(wait)")
        }
    }

    @Test("an HTTP date reads the same in its three forms, spaces and tabs around it ignored; anything else is none")
    func httpDateForms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse(" \tSun, 06 Nov 1994 08:49:37 GMT\t ") == expected)
        #expect(HTTPDate.parse("\t \t") == nil)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        for junk in ["", "yesterday", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun Nov 6 08:49 1994", "Sun, 31 Foo 1994 08:49:37 GMT"] {
            #expect(HTTPDate.parse(junk) == nil, "\(junk)")
        }
    }

    /// Found by the hostile-answer fuzzer: swift-corelibs-foundation traps when a redirect's
    /// answer reaches a task that was cancelled while the delegate was asked (its deadline ran
    /// out meanwhile). The transport never answers a cancelled task's redirect.
    @Test("a redirect is answered for a running task, never for a cancelled one")
    func noRedirectAnswerAfterCancel() async throws {
        let server = try await RawHTTPServer.start { _ in .init("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", holdOpen: true) }
        let transport = URLSessionTransport()
        try await withCleanup({ await server.stop() }) {
            let url = try #require(URL(string: server.baseURL + "/held"))
            #if canImport(FoundationNetworking)
            let handle = DataTaskHandle(callbacks: transport.callbacks)
            #else
            let handle = DataTaskHandle()
            #endif
            handle.start(transport.session.dataTask(with: url))
            let answered = TestBox(0)
            handle.answerRedirect { answered.mutate { $0 += 1 } }
            #expect(answered.value == 1, "a running task's redirect is answered")
            handle.cancel()
            handle.answerRedirect { answered.mutate { $0 += 1 } }
            #expect(answered.value == 1, "a cancelled task's is not: its cancellation ends it")
        }
    }
}
