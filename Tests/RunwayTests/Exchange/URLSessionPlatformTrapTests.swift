import Foundation
@testable import Runway
import RunwayTestSupport
import Testing

/// What no transport of Runway's can catch: a trap inside the platform's own HTTP stack, before
/// any of Runway's code sees the answer. Proved here in a child process, so that the day the
/// platform is fixed this test says so (and the limit in the *Transports* article can go).
@Suite("A platform's own trap, proved", .timeLimit(.minutes(10)))
struct URLSessionPlatformTrapTests {
    /// `Content-Length: 9223372036854775807` (2⁶³ − 1): libcurl reports the length as a
    /// `Double`, which rounds it to 2⁶³, and swift-corelibs-foundation's header callback
    /// converts that to `Int64` unchecked (`_EasyHandle.didReceive(headerData:size:nmemb:
    /// contentLength:)`) — the process traps. Over AsyncHTTPClient the same answer is a typed
    /// error.
    @Test("Linux: URLSession traps on a Content-Length of 2⁶³ − 1; AsyncHTTPClient's transport refuses it as larger than allowed")
    func contentLengthAtInt64Max() async throws {
        #if canImport(Darwin)
        return
        #else
        let server = try await RawHTTPServer.start { _ in
            .init("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775807\r\n\r\n{}")
        }
        func load(over transport: String) async throws -> (ChildProcess, String) {
            let child = ChildProcess(
                runwayExecutable().path,
                ["network", "--get", "\(server.baseURL)/huge", "--timeout", "20", "--transport", transport],
                output: .pipe, error: .pipe)
            try child.run()
            let (output, failure) = (child.standardOutput, child.standardError)
            let text = try await offThePool { () throws -> String in
                defer { child.waitUntilExit() }
                let data = try output?.readToEnd() ?? Data()
                _ = try failure?.readToEnd()
                return String(decoding: data, as: UTF8.self)
            }
            return (child, text)
        }
        try await withCleanup({ await server.stop() }) {
            let (overURLSession, _) = try await load(over: "urlsession")
            #expect(
                overURLSession.terminationReason == .uncaughtSignal,
                "URLSession no longer traps here: the platform is fixed, and the limit can go from the Transports article")
            let (overNIO, lines) = try await load(over: "asynchttpclient")
            #expect(overNIO.terminationReason == .exit && overNIO.terminationStatus == 0)
            #expect(lines.contains(#""outcome":"error""#) && lines.contains("larger than allowed"), "\(lines)")
        }
        #endif
    }
}
