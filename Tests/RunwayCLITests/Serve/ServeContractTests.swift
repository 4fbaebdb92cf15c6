import Foundation
@testable import Runway
import RunwayTestSupport
import Testing

/// `runway serve`'s published contract, `OpenAPI/runway-serve.yaml`: valid OpenAPI 3.1 by
/// openapi-spec-validator, and held by the running server under schemathesis — a contract
/// fuzzer Runway's authors did not write — with every request signed by a second, Python
/// implementation of Runway's signature.
@Suite("runway serve keeps its OpenAPI contract", .timeLimit(.minutes(10)))
struct ServeContractTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("OpenAPI/runway-serve.yaml")

    @Test("The document is valid OpenAPI 3.1 (openapi-spec-validator)")
    func documentIsValid() async throws {
        // Python runs off the pool: a slow interpreter start must not stall the suite's tasks.
        try #require(await offThePool { PythonTools.has("openapi_spec_validator") }, "openapi-spec-validator is missing: \(PythonTools.installHint)")
        let output = String(
            decoding: try await offThePool { try PythonTools.run(["-m", "openapi_spec_validator", Self.document.path]) }, as: UTF8.self)
        #expect(output.contains("OK"), "\(output)")
    }

    @Test("schemathesis, seeded, valid and invalid cases of every operation: no 5xx, every status, content type, header and body as documented; signed batches stored")
    func schemathesisFindsNothing() async throws {
        try #require(await offThePool { PythonTools.has("schemathesis") }, "schemathesis is missing: \(PythonTools.installHint)")
        let (process, baseURL, banner) = try await startServe(["--demo"], niceness: 5) { $0.contains("Signatures verified") }
        defer { process.terminate() }
        let secret = try #require(banner.last?.components(separatedBy: "secret ").last?.split(separator: " ").first.map(String.init))
        // At a lower priority: the fuzzer's CPU is its own business, not the suite's.
        let output = try await offThePool {
            try PythonTools.run([
                "-c", "import os, runpy, sys; os.nice(10); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                Fixtures.folder.appendingPathComponent("schemathesis-serve.py").path, Self.document.path, baseURL,
                "runway-demo-2026", secret, "15", "1",
            ])
        }
        let report = try JSON(parsing: output)
        let failures = report["failures"]?.arrayValue ?? []
        #expect(failures.isEmpty, "\(failures.map { "\($0)" }.joined(separator: "\n"))")
        let answers = report["answers"]?.objectValue ?? [:]
        #expect(!answers.keys.contains { $0.hasSuffix(" 500") || $0.hasSuffix(" 502") || $0.hasSuffix(" 503") })
        for operation in ["GET /health", "GET /ready", "GET /metrics", "POST /oplog/batches", "GET /oplog/stats", "GET /signed/echo/{name}", "POST /signed/echo/{name}"] {
            #expect(answers.keys.contains { $0.hasPrefix(operation + " ") }, "\(operation) was exercised")
        }
        // The Python signer and the verifier agree: generated batches were stored, not refused 401.
        #expect((answers["POST /oplog/batches 200"]?.intValue ?? 0) > 0)
        #expect(answers["POST /oplog/batches 401"] == nil)
        #expect((report["cases"]?.intValue ?? 0) >= 90)
    }
}
