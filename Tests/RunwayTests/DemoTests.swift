import Foundation
import Testing

/// `runway demo`, end to end in a child process: it exits 0 only when every part saw what it
/// expected, and prints figures from the run.
@Suite("Demo", .timeLimit(.minutes(2)))
struct DemoTests {
    @Test("runway demo --metrics exits 0 and shows listings, operation-log batches, the chosen endpoint and metrics")
    func demoRunsEndToEnd() async throws {
        let (process, reader) = try startNiced(["demo", "--metrics"])
        let output = await offThePool {
            let data = reader.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("Done: 30 listings from 3 APIs"))
        #expect(output.contains("3 uploads of 30, 30, 30 events"))
        #expect(output.contains("the collector holds 95 events"))
        #expect(output.contains("chosen: 127.0.0.1"))
        #expect(output.contains("runway_loads_total {api=OperationLogUpload service=oplog outcome=success} 4"))
    }
}
