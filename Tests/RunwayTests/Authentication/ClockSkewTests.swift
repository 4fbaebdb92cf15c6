import Crypto
import Foundation
import HTTPTypes
import Runway
import RunwayNIO
import RunwayDemoServer
import RunwayServer
import RunwayTestSupport
import Testing

@testable import Runway

/// A credential that never needs a server: counts the refreshes it is asked for.
struct CountingAuthenticator: Authenticator {
    let refreshes = TestBox(0)
    /// Where the token goes: `Authorization` unless the service's signer writes that field.
    var field: HTTPField.Name = .authorization

    var credentialFields: Set<HTTPField.Name> { [field] }
    func credential() async throws -> String? { "token-1" }
    func apply(_ token: String, to request: inout HTTPRequest) { request.headerFields[field] = "Bearer \(token)" }
    func refresh(_ expired: String?) async throws -> String {
        refreshes.mutate { $0 += 1 }
        return "token-\(refreshes.value + 1)"
    }
}

@Suite("A wrong device clock is corrected, never taken for an expired sign-in", .timeLimit(.minutes(10)))
struct ClockSkewTests {
    static let secret = SymmetricKey(data: Data(repeating: 7, count: 32))

    /// A signing server on the real clock (unless `serverNow` says otherwise), and an engine over
    /// `kind` whose service signs with `signer` and carries a counted credential.
    func withSkewedDevice(
        _ kind: TransportKind, signer: any RequestSigner,
        serverNow: @escaping @Sendable () -> Date = { Date() }, credentialField: HTTPField.Name = .authorization,
        _ body: (Engine, DemoServer, CountingAuthenticator) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start(
            signatureVerifier: SignatureVerifier(keys: ["ios-app": [Self.secret]], now: serverNow))
        let nio: AsyncHTTPClientTransport? = kind == .asyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let engine = Engine(transport: nio ?? URLSessionTransport())
        let authenticator = CountingAuthenticator(field: credentialField)
        try engine.register(
            Service(
                id: .test,
                environment: .develop,
                baseURLs: [.develop: server.baseURL],
                credentials: .init(authentication: Authentication(authenticator), signer: signer)))
        try await withCleanup({
            try? await nio?.shutdown()
            await server.stop()
        }) {
            try await body(engine, server, authenticator)
        }
    }

    @Test("a signer 15 minutes or a day off: every load succeeds after one correction, with no refresh",
          arguments: TransportKind.allCases, [-86_400.0, -900.0, 900.0, 86_400.0])
    func hmacSkew(_ kind: TransportKind, _ skew: TimeInterval) async throws {
        let signer = HMACSigner(keyID: "ios-app", secret: Self.secret, now: { Date().addingTimeInterval(skew) })
        try await withSkewedDevice(kind, signer: signer) { engine, server, authenticator in
            for _ in 0..<3 {
                let response = try await engine.perform(AdHocAPI(path: "/signed/echo/orders")).get()
                #expect(response.json?["path"]?.stringValue == "/signed/echo/orders")
            }
            #expect(authenticator.refreshes.value == 0, "a wrong clock is not an expired sign-in")
            #expect(server.probe.count("/echo") == 3)
            // The offset undoes the skew to within the second the server's time is given in
            // (and however long the first exchange took).
            #expect(abs(signer.clockOffset + skew) < 60)
        }
    }

    @Test("a second refusal for the time within one load lands as the 401 it is: one correction, no refresh")
    func oneCorrectionPerLoad() async throws {
        // The verifier's clock jumps a day at every request: no correction can keep up.
        let calls = TestBox(0)
        let base = Date()
        let serverNow: @Sendable () -> Date = {
            calls.mutate { $0 += 1 }
            return base.addingTimeInterval(Double(calls.value) * 86_400)
        }
        let signer = HMACSigner(keyID: "ios-app", secret: Self.secret)
        try await withSkewedDevice(.asyncHTTPClient, signer: signer, serverNow: serverNow) { engine, server, authenticator in
            let outcome = await engine.perform(AdHocAPI(path: "/signed/echo/orders"))
            guard case .failure(.httpStatus(401, let body)) = outcome else {
                Issue.record("expected the second refusal as a 401, got \(outcome)")
                return
            }
            #expect((try? JSON(parsing: body))?["reason"] == "stale_timestamp")
            #expect(calls.value == 2, "signed twice: the first attempt and one correction")
            #expect(authenticator.refreshes.value == 0)
            #expect(server.probe.count("/echo") == 0)
        }
    }

    @Test("an expired credential is still refreshed when the clock is right")
    func expiryStillRefreshes() async throws {
        let signer = HMACSigner(keyID: "ios-app", secret: Self.secret)
        try await withSkewedDevice(.asyncHTTPClient, signer: signer) { engine, _, authenticator in
            // `/faults/challenge` answers 401 whatever is sent: an expired sign-in, twice.
            let outcome = await engine.perform(AdHocAPI(path: "/faults/challenge"))
            #expect(authenticator.refreshes.value == 1)
            guard case .failure(.unauthenticated) = outcome else {
                Issue.record("expected unauthenticated after one refresh, got \(outcome)")
                return
            }
        }
    }

    @Test("an S3-style RequestTimeTooSkewed is corrected the same way, from its ServerTime",
          arguments: TransportKind.allCases, [-86_400.0, -1_200.0, 1_200.0, 86_400.0])
    func awsSkew(_ kind: TransportKind, _ skew: TimeInterval) async throws {
        let signer = AWSSignatureV4Signer(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", region: "us-east-1", service: "s3", style: .s3,
            now: { Date().addingTimeInterval(skew) })
        // SigV4 writes Authorization: the token goes in a field of its own.
        try await withSkewedDevice(kind, signer: signer, credentialField: HTTPField.Name("X-Session-Token")!) {
            engine, server, authenticator in
            for _ in 0..<3 {
                let response = try await engine.perform(AdHocAPI(path: "/faults/aws-time")).get()
                #expect(response.json?["data"]?["amzDate"] != nil)
            }
            #expect(server.probe.count("/faults/aws-time") == 4, "one refusal, then three accepted")
            #expect(authenticator.refreshes.value == 0)
            #expect(abs(signer.clockOffset + skew) < 60)
        }
    }

    @Test("a SigV4 signature error with the clocks close is a key problem: no correction")
    func awsSignatureErrorWithRightClock() throws {
        let signer = AWSSignatureV4Signer(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", region: "us-east-1", service: "execute-api")
        var head = HTTPResponse(status: .forbidden)
        let body = Data(#"{"__type":"InvalidSignatureException","message":"The request signature we calculated does not match"}"#.utf8)
        head.headerFields[.date] = imfFixdate(Date())
        #expect(!signer.correctsClock(after: head, body: body))
        #expect(signer.clockOffset == 0)
        head.headerFields[.date] = imfFixdate(Date().addingTimeInterval(-86_400))
        #expect(signer.correctsClock(after: head, body: body))
        #expect(abs(signer.clockOffset + 86_400) < 60)
    }
}

/// `date` as an IMF-fixdate, by Foundation's formatter: an independent reading for the parser.
func imfFixdate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

@Suite("Reading what a refusal says: challenges and HTTP dates", .timeLimit(.minutes(10)))
struct ChallengeReadingTests {
    @Test("WWW-Authenticate: several challenges, quoted and token values, token68, escapes")
    func challenges() {
        #expect(
            AuthenticationChallenge.parse(#"Basic realm="a, b", Bearer error="invalid_token", error_description="x \"y\"""#)
                == [
                    AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "a, b"]),
                    AuthenticationChallenge(
                        scheme: "Bearer", parameters: ["error": "invalid_token", "error_description": #"x "y""#]),
                ])
        #expect(
            AuthenticationChallenge.parse("Negotiate, NTLM") == [
                AuthenticationChallenge(scheme: "Negotiate"), AuthenticationChallenge(scheme: "NTLM"),
            ])
        #expect(
            AuthenticationChallenge.parse("Negotiate YIIC==, Basic realm=x") == [
                AuthenticationChallenge(scheme: "Negotiate", parameters: ["": "YIIC=="]),
                AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "x"]),
            ])
        #expect(AuthenticationChallenge.parse(#"Bearer error="unterminated"#).first?.scheme == "Bearer")
        #expect(AuthenticationChallenge.parse("").isEmpty)
        #expect(AuthenticationChallenge.parse(#"="only", ,,"#).isEmpty)
    }

    @Test("the verifier's skew challenge gives its time; any other 401 gives none")
    func skewChallenge() {
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        var head = HTTPResponse(status: .unauthorized)
        head.headerFields[.wwwAuthenticate] = RequestSignature.clockSkewChallenge(serverTime: time)
        #expect(RequestSignature.serverTime(ifClockSkewed: head) == time)
        head.headerFields[.wwwAuthenticate] = #"runway-hmac-sha256 error="request_time_skewed""#
        head.headerFields[.date] = imfFixdate(time)
        #expect(RequestSignature.serverTime(ifClockSkewed: head) == time, "without server_time, the Date field")
        head.headerFields[.wwwAuthenticate] = #"RUNWAY-HMAC-SHA256 error="bad_signature""#
        #expect(RequestSignature.serverTime(ifClockSkewed: head) == nil)
        head.headerFields[.wwwAuthenticate] = #"Bearer error="request_time_skewed""#
        #expect(RequestSignature.serverTime(ifClockSkewed: head) == nil, "another scheme's error")
    }

    @Test("IMF-fixdate dates parse to the instant Foundation's formatter wrote; malformed ones do not")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        var random = SplitMix64(seed: 2026)
        for _ in 0..<200 {
            let date = Date(timeIntervalSince1970: TimeInterval(random.next() % 8_000_000_000))
            #expect(HTTPDate.parse(imfFixdate(date)) == date)
        }
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("") == nil)
    }
}
