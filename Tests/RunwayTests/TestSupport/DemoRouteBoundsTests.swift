import Foundation
import HTTPTypes
import Runway
import RunwayDemoServer
import RunwayTestSupport
import Testing

/// The demo server's `/files/blob`, which the download tests and `runway demo` load: the sizes,
/// cuts and ranges a client names are input, and the server answers them without stopping.
@Suite("The blob route's bounds", .timeLimit(.minutes(5)))
struct BlobRouteTests {
    static func load(_ harness: Harness, params: Parameters, range: String? = nil) async -> Result<RawResponse, RunwayError> {
        var headers = HTTPFields()
        if let range { headers[.range] = range }
        return await harness.engine.perform(AdHocAPI(path: "/files/blob", headers: headers, responseFormat: .raw), params: params)
    }

    @Test("a size, a cut or a range past the blob's bounds is refused with 400, never added up past Int64")
    func boundsRefused() async throws {
        try await withHarness { harness in
            let refused: [(Parameters, String?)] = [
                // Before, each stopped the server's process: `size - from` and `start + drop_after` overflowed.
                (["size": "9223372036854775807"], "bytes=-1-"),
                (["size": "10", "drop_after": "9223372036854775807"], "bytes=5-"),
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
}
