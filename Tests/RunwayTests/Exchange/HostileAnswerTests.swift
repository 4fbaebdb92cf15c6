import Crypto
import Foundation
import HTTPTypes
@testable import Runway
import RunwayTestSupport
import Testing

/// Answers a server may send that no client should trust: each ends in a typed outcome, never a
/// trap, over both transports.
@Suite("Hostile answers end in typed outcomes")
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
}
