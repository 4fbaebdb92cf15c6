import Foundation
import HTTPTypes
@testable import Runway
import RunwayTestSupport
import Testing

@Suite("AWS Signature Version 4", .timeLimit(.minutes(10)))
struct AWSSignatureV4Tests {
    static let exampleDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let context = SigningContext(apiName: "Example", service: "aws", attempt: 1)

    @Test("AWS's published example: IAM ListUsers, 2015-08-30T12:36:00Z, us-east-1")
    func publishedExample() throws {
        let signer = AWSSignatureV4Signer(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1",
            service: "iam", sendsContentSHA256: false, now: { Self.exampleDate })
        var request = HTTPRequest(
            method: .get, scheme: "https", authority: "iam.amazonaws.com", path: "/?Action=ListUsers&Version=2010-05-08")
        request.headerFields[.contentType] = "application/x-www-form-urlencoded; charset=utf-8"
        try signer.sign(&request, body: nil, context: Self.context)
        #expect(request.headerFields[HTTPField.Name("X-Amz-Date")!] == "20150830T123600Z")
        #expect(
            request.headerFields[.authorization]
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
        #expect(!String(describing: signer).contains("wJalrXUtnFEMI"))
    }

    @Test("the content hash header is sent and signed unless turned off")
    func contentHash() throws {
        let signer = AWSSignatureV4Signer(
            accessKeyID: "AKID", secretAccessKey: "secret", region: "eu-west-1", service: "s3", style: .s3,
            now: { Self.exampleDate })
        var request = HTTPRequest(method: .put, scheme: "https", authority: "bucket.s3.amazonaws.com", path: "/key")
        try signer.sign(&request, body: Data("hello".utf8), context: Self.context)
        #expect(
            request.headerFields[HTTPField.Name("X-Amz-Content-Sha256")!]
                == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        #expect(request.headerFields[.authorization]?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date") == true)
    }

    struct Case: Codable, Sendable {
        var method: String
        var url: String
        var headers: [String: String]
        var body: String  // hex
        var style: String
        var service: String
        var region: String
        var access: String
        var secret: String
    }

    /// The 300 cases both comparisons sign, generated once.
    static let cases = generateCases(count: 300)

    static func generateCases(count: Int) -> [Case] {
        var random = SplitMix64(seed: 20_260_830)
        let pathPieces = ["a", "b c", "é", "日本", "!$&'()*+,;=:@", "~tilde", "50%", "..", ".", "", "x-y_z.txt", "über/ünter"]
        let queryPieces = ["a", "b c", "é", "&", "=", "+", "~", "", "日", "q/r?s", "%41"]
        let bodySizes = [0, 1, 17, 1000, 65_536, 100_003]
        return (0..<count).map { index in
            var path = ""
            for _ in 0..<(1 + random.below(4)) {
                path += "/" + QueryEncoder.percentEncode(random.pick(pathPieces)).replacingOccurrences(of: "%2F", with: "/")
            }
            if random.below(4) == 0 { path += "/" }
            var pairs: [String] = []
            for _ in 0..<random.below(6) {
                let name = QueryEncoder.percentEncode(random.pick(queryPieces))
                let value = QueryEncoder.percentEncode(random.pick(queryPieces))
                switch random.below(4) {
                case 0: pairs.append(name)  // a key with no value
                case 1 where !pairs.isEmpty: pairs.append(pairs[random.below(pairs.count)])  // repeated key
                default: pairs.append("\(name)=\(value)")
                }
            }
            let query = pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
            let size = random.pick(bodySizes)
            let body = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var headers = ["Content-Type": random.pick(["application/json", "text/plain;  charset=utf-8", "application/octet-stream"])]
            if random.below(2) == 0 { headers["X-Custom-Meta"] = "  spaced   value  " }
            let style = index % 3 == 0 ? "s3" : "standard"
            let host = random.pick(["api.example.com", "bucket.s3.amazonaws.com", "example.com:8443"])
            return Case(
                method: random.pick(["GET", "PUT", "POST", "DELETE"]), url: "https://\(host)\(path.isEmpty ? "/" : path)\(query)",
                headers: headers, body: RequestSignature.hex(body), style: style,
                service: style == "s3" ? "s3" : random.pick(["execute-api", "iam", "dynamodb"]),
                region: random.pick(["us-east-1", "eu-central-1", "ap-southeast-2"]), access: "AKIDEXAMPLE\(index)",
                secret: "secret/\(index)+key")
        }
    }

    /// The fixture: botocore's signatures of ``generateCases(count:)``, made by
    /// `Fixtures/botocore-sigv4.py`, with the SHA-256 of the cases they were made from.
    struct Fixture: Codable {
        var casesSHA256: String
        var authorizations: [String]
    }

    static let fixtures = Fixtures.folder
    static let fixtureURL = fixtures.appendingPathComponent("botocore-sigv4-expected.json")
    static let scriptURL = fixtures.appendingPathComponent("botocore-sigv4.py")

    /// Our signature of every generated case.
    static func ourSignatures(_ cases: [Case]) throws -> [String] {
        try cases.map { item in
            let body = Data(hex: item.body)
            let signer = AWSSignatureV4Signer(
                accessKeyID: item.access, secretAccessKey: item.secret, region: item.region, service: item.service,
                style: item.style == "s3" ? .s3 : .standard, now: { Self.exampleDate })
            guard let url = URLComponents(string: item.url) else { throw CaseError(url: item.url) }
            let authority = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
            var request = HTTPRequest(
                method: .init(item.method) ?? .get, scheme: "https", authority: authority,
                path: url.percentEncodedPath + (url.percentEncodedQuery.map { "?\($0)" } ?? ""))
            for (name, value) in item.headers {
                guard let field = HTTPField.Name(name) else { throw CaseError(url: item.url) }
                request.headerFields[field] = value
            }
            try signer.sign(&request, body: body.isEmpty ? nil : body, context: Self.context)
            return request.headerFields[.authorization] ?? ""
        }
    }

    struct CaseError: Error {
        var url: String
    }

    static func casesHash(_ cases: [Case]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return RequestSignature.sha256Hex(try encoder.encode(cases))
    }

    static func compare(_ ours: [String], _ theirs: [String], _ cases: [Case]) {
        #expect(theirs.count == ours.count)
        var mismatches = 0
        for (index, (mine, reference)) in zip(ours, theirs).enumerated() where mine != reference {
            mismatches += 1
            if mismatches <= 3 { Issue.record("case \(index) \(cases[index].url): ours \(mine) botocore \(reference)") }
        }
        #expect(mismatches == 0)
    }

    // Both comparisons sign megabytes of bodies and the live one waits for Python: that work runs
    // on a thread of its own (`offThePool`), never on the few threads every other test shares.

    @Test("every generated request signs exactly as botocore signed it (the committed fixture)")
    func matchesBotocoreFixture() async throws {
        let (hash, ours, fixture) = try await offThePool {
            let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: Self.fixtureURL))
            return (try Self.casesHash(Self.cases), try Self.ourSignatures(Self.cases), fixture)
        }
        #expect(
            fixture.casesSHA256 == hash,
            "the generated cases changed: regenerate the fixture with botocore installed and RUNWAY_WRITE_BOTOCORE_FIXTURE=1")
        Self.compare(ours, fixture.authorizations, Self.cases)
    }

    @Test("every generated request signs exactly as botocore signs it now (botocore from Tests/python-tools.txt)")
    func matchesBotocoreLive() async throws {
        struct Input: Encodable {
            var method, url, body, style, service, region, access, secret, payload: String
            var headers: [String: String]
        }
        try #require(await offThePool { PythonTools.has("botocore") }, "botocore is missing: \(PythonTools.installHint)")
        let (ours, botocore) = try await offThePool {
            let inputs = Self.cases.map { item in
                Input(
                    method: item.method, url: item.url, body: item.body, style: item.style, service: item.service,
                    region: item.region, access: item.access, secret: item.secret,
                    payload: RequestSignature.sha256Hex(Data(hex: item.body)), headers: item.headers)
            }
            let output = try PythonTools.run([Self.scriptURL.path], input: try JSONEncoder().encode(inputs))
            return (try Self.ourSignatures(Self.cases), try JSONDecoder().decode([String].self, from: output))
        }
        Self.compare(ours, botocore, Self.cases)
        if ProcessInfo.processInfo.environment["RUNWAY_WRITE_BOTOCORE_FIXTURE"] == "1" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(Fixture(casesSHA256: try Self.casesHash(Self.cases), authorizations: botocore))
                .write(to: Self.fixtureURL)
        }
    }
}

extension Data {
    init(hex: String) {
        let digits = Array(hex.utf8)
        var bytes = [UInt8](repeating: 0, count: digits.count / 2)
        for index in bytes.indices {
            bytes[index] = Self.nibble(digits[2 * index]) << 4 | Self.nibble(digits[2 * index + 1])
        }
        self.init(bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit &- UInt8(ascii: "0") : (digit | 0x20) &- UInt8(ascii: "a") &+ 10
    }
}
