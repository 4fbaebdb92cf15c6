import Foundation
import Runway
import RunwayTestSupport
import Testing

@Suite("Error messages in English and Simplified Chinese", .timeLimit(.minutes(10)))
struct ErrorMessageTests {
    static let everyCase: [RunwayError] = [
        .paramsInvalid(reason: "r"), .paramsUnencodable(reason: "r"), .invalidRequest(reason: "r"),
        .vetoed(reason: "r"), .httpStatus(code: 503, body: Data()), .business(code: 7, message: "m"),
        .invalidResponse(reason: "r"), .noContent, .timeout, .noNetwork(reason: .connectionRefused),
        .noNetwork(reason: .unreachable), .noNetwork(reason: .dnsFailure), .connectionLost, .cancelled,
        .insecureConnection(host: "h"), .pinningFailed(host: "h"), .tlsFailure(reason: "r"), .transport(description: "d"),
        .redirectRefused(location: "l", reason: "r"), .unauthenticated(reason: "r"),
    ]

    @Test("every case has its own message in both languages, read from the package resources", arguments: everyCase)
    func messages(_ error: RunwayError) {
        let english = error.localizedMessage(language: "en")
        let chinese = error.localizedMessage(language: "zh-Hans")
        #expect(!english.hasPrefix("error."), "the English table must hold \(english)")
        #expect(!chinese.hasPrefix("error."), "the Chinese table must hold \(chinese)")
        #expect(english != chinese)
        #expect(chinese.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF })
    }

    @Test("messages carry their detail")
    func details() {
        #expect(RunwayError.httpStatus(code: 503, body: Data()).localizedMessage() == "The server answered with HTTP status 503.")
        #expect(RunwayError.paramsInvalid(reason: "phone must have 11 digits").localizedMessage(language: "zh-Hans") == "请求参数无效：phone must have 11 digits")
        #expect(RunwayError.business(code: 7, message: "sold out").localizedDescription == "The server reported an error: sold out (7)")
        #expect(RunwayError.timeout.localizedMessage(language: "fr") == "The request timed out.", "unknown languages fall back to English")
    }
}
