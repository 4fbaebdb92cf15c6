import Foundation
@testable import Runway
import RunwayServer
import RunwayTestSupport
import Testing

/// Paths built from values: `\(pathSegment:)` keeps a value inside its segment, and a dot
/// segment never leaves the device.
@Suite("Path segments", .timeLimit(.minutes(10)))
struct PathSegmentTests {
    @Test("an interpolated segment reaches the server as one segment, whatever it holds", arguments: TransportKind.allCases)
    func segmentStaysOneSegment(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let name = "a/b?c#d%e f;é"
            let api = AdHocAPI(path: "/echo/users/\(pathSegment: name)/posts")
            let response = try await harness.engine.perform(api, params: [:]).get()
            #expect(response.json?["path"]?.stringValue == "/echo/users/a%2Fb%3Fc%23d%25e%20f%3B%C3%A9/posts")
            #expect(response.json?["query"]?.stringValue == "")
            // Dots inside a segment are ordinary characters.
            let dotted = AdHocAPI(path: "/echo/\(pathSegment: "...")/\(pathSegment: ".hidden")/a..b")
            #expect(try await harness.engine.perform(dotted, params: [:]).get().json?["path"]?.stringValue == "/echo/.../.hidden/a..b")
        }
    }

    @Test("a dot segment, written or interpolated, is refused before anything is sent", arguments: TransportKind.allCases)
    func dotSegmentsAreRefused(_ transport: TransportKind) async throws {
        try await withHarness(transport) { harness in
            let paths = [
                "/echo/users/\(pathSegment: "..")/admin", "/echo/../admin", "/echo/./x", "/echo/%2e%2E/admin", "/echo/x/..",
                "/echo/%2E",
            ]
            for path in paths {
                let result = await harness.engine.perform(AdHocAPI(path: path), params: [:])
                guard case .failure(.invalidRequest(let reason)) = result else {
                    Issue.record("\(path): \(result)")
                    continue
                }
                #expect(reason.contains("segment"), "\(path): \(reason)")
            }
            #expect(harness.probe.count("/echo") == 0)
        }
    }
}
