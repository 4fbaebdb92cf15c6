import Foundation
import Runway
import RunwayTestSupport

extension DemoChapter {
    /// Every request of a service is signed; the server verifies the signature over method,
    /// host, path, query, body hash, a timestamp and a nonce, so a request changed on the way or
    /// sent twice is refused with its reason.
    static let signing = DemoChapter("signing", "Signing (seed 003: 簽名)") { context, log in
        let tap = Wiretap(context.wire)
        let engine = Engine(transport: tap, logger: context.logger, metrics: nil, recorder: context.recorder)
        try engine.register(Service(id: .demo, baseURLs: [.release: context.baseURL], credentials: .init(signer: context.signer)))
        let api = AdHocAPI("SignedEchoAPI", path: "/signed/echo/listing")

        let signed = try await engine.perform(api, params: ["id": 7]).get()
        let fields = (signed.json?["headers"]?.objectValue ?? [:]).keys.filter { $0.lowercased().hasPrefix("x-runway-") }.sorted()
        log.say("signed GET /signed/echo/listing?id=7 → \(signed.status.code); the server checked \(fields.joined(separator: ", "))")
        guard let captured = tap.last else { throw DemoChapterFailure(description: "no request was captured") }

        tap.tamper = { request in
            request.head.path = request.head.path?.replacingOccurrences(of: "id=7", with: "id=8")
        }
        let tampered = await engine.perform(api, params: ["id": 7])
        let tamperedReason = Self.refusal(tampered)
        log.say("the same request, its query changed on the way (id=7 → id=8) → \(tamperedReason.status) \(tamperedReason.reason)")

        // Sent again as it went on the wire; its body comes back here, not to the first load.
        var replay = captured
        replay.responseSink = nil
        let replayed = try await context.wire.send(replay)
        let replayReason = (try? JSON(parsing: replayed.body))?["reason"]?.stringValue ?? "?"
        log.say("the first request, captured and sent again → \(replayed.head.status.code) \(replayReason)")

        log.figure("signedStatus", .int(signed.status.code))
        log.figure("tamperedReason", .string(tamperedReason.reason))
        log.figure("replayedReason", .string(replayReason))
        // Sent by hand, as an attacker would, around the engine: not a load of the app's.
        log.figure("requestsAroundTheEngine", .int(1))
        try log.require(signed.status.code == 200, "the signed request was refused")
        try log.require(tamperedReason.status == 401 && tamperedReason.reason == "bad_signature", "the tampered request was not refused as bad_signature")
        try log.require(replayed.head.status.code == 401 && replayReason == "replayed_nonce", "the replay was not refused as replayed_nonce")
    }

    /// The status and machine-readable reason of a refused load.
    private static func refusal(_ result: Result<RawResponse, RunwayError>) -> (status: Int, reason: String) {
        guard case .failure(.httpStatus(let code, let body)) = result else { return (0, "not refused: \(result)") }
        return (code, (try? JSON(parsing: body))?["reason"]?.stringValue ?? "?")
    }
}
