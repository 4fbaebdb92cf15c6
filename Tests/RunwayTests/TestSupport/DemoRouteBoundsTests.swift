import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayTestSupport
import Testing

/// The demo server's routes, which the tests and `runway demo` load: the sizes, cuts, ranges,
/// statuses and waits a client names are input, and the server answers them without stopping.
@Suite("The demo server's routes: a client's numbers are input", .timeLimit(.minutes(5)))
struct DemoRouteBoundsTests {
    static func load(
        _ harness: Harness, _ path: String = "/files/blob", params: Parameters, range: String? = nil
    ) async -> Result<RawResponse, RunwayError> {
        var headers = HTTPFields()
        if let range { headers[.range] = range }
        return await harness.engine.perform(
            AdHocAPI(path: path, redirectPolicy: .never, headers: headers, responseFormat: .raw), params: params)
    }

    @Test("a size, a cut or a range past the blob's bounds is refused with 400, never added up past Int64")
    func boundsRefused() async throws {
        try await withHarness { harness in
            let refused: [(Parameters, String?)] = [
                // Before, these two stopped the server's process: `size - from` and `start + drop_after` overflowed.
                (["size": "9223372036854775807"], "bytes=-1-"),
                (["size": "10", "drop_after": "9223372036854775807"], "bytes=5-"),
                // Sizes and cuts no blob has.
                (["size": "-1"], nil),
                (["size": "10", "hold_after": "-1"], nil),
            ]
            for (params, range) in refused {
                let result = await Self.load(harness, params: params, range: range)
                guard case .failure(.httpStatus(400, _)) = result else {
                    Issue.record("\(params) with range \(range ?? "none"): \(result)")
                    continue
                }
            }
        }
    }

    @Test("a range with a negative start is no range: the blob comes whole")
    func negativeRangeIgnored() async throws {
        try await withHarness { harness in
            let response = try await Self.load(harness, params: ["size": "10"], range: "bytes=-5-").get()
            #expect(response.status == .ok)
            #expect(response.body == Data(TransferRoutes.blobBytes(at: 0, count: 10)))
        }
    }

    @Test("a status no HTTP answer has is refused with 400, in a path or a query", arguments: ["0", "99", "1000", "-1", "9223372036854775807"])
    func statusesRefused(code: String) async throws {
        try await withHarness { harness in
            // Before, each stopped the server's process (HTTPTypes' precondition on a status).
            let loads = [
                await Self.load(harness, "/faults/status/\(code)", params: [:]),
                await Self.load(harness, "/faults/redirect-to/\(code)/next", params: [:]),
                await Self.load(harness, "/faults/flaky", params: ["key": .string("odd-\(code)"), "status": .string(code)]),
                await Self.load(harness, "/faults/redirect", params: ["to": "/next", "status": .string(code)]),
            ]
            for result in loads {
                guard case .failure(.httpStatus(400, _)) = result else {
                    Issue.record("status \(code): \(result)")
                    continue
                }
            }
        }
    }

    @Test("a wait that is not a number of seconds (nan, inf) is the default wait")
    func waitsNotFinite() async throws {
        try await withHarness { harness in
            for seconds in ["nan", "inf", "-inf"] {
                // Before, a Duration of them stopped the server's process.
                let response = try await Self.load(harness, "/edges/late", params: ["seconds": .string(seconds)]).get()
                #expect(response.status == .ok, "\(seconds)")
            }
        }
    }
}
