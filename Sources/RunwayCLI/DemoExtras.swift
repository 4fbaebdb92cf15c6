import ArgumentParser
import Foundation
import HTTPTypes
import Runway
import RunwayExamples
import RunwayServer
import RunwayStorage

/// The demo's parts for operation logs and endpoint selection, with figures from the run.
enum DemoExtras {
    /// 95 events: three uploads of 30 now, the 5 left at the next launch; signed, gzip, stored once.
    static func operationLogs(engine: Engine, baseURL: String, scratch: URL, store: SQLiteOperationLogStore) async throws {
        engine.register(
            Service(
                id: "oplog", baseURLs: [.release: baseURL],
                signer: HMACSigner(keyID: DemoSigningKey.keyID, secret: DemoSigningKey.secret)))
        var configuration = OperationLog.Configuration()
        configuration.maximumAge = .seconds(3600)
        let container = Container(root: scratch.appendingPathComponent("device"))
        print("\nOperation logs: 95 taps recorded, sent in batches of 30 (seed 003: 打包上傳)")
        let (reports, sink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        let log = try OperationLog(engine: engine, service: "oplog", container: container, configuration: configuration) {
            sink.yield($0)
        }
        for index in 0..<95 { try log.record("listing.tap", payload: ["position": .int(index % 20)]) }
        var uploads: [OperationLog.UploadReport] = []
        for await report in reports {
            uploads.append(report)
            if uploads.count == 3 { break }
        }
        let left = try await log.status().pending
        await log.close()
        let sent = uploads.reduce(0) { $0 + $1.bodyBytes }
        let json = uploads.reduce(0) { $0 + $1.uncompressedBytes }
        print("  now: \(uploads.count) uploads of \(uploads.map { String($0.eventCount) }.joined(separator: ", ")) events, "
            + "\(sent) B gzip for \(json) B of JSON; \(left) wait for a full batch")
        let (nextReports, nextSink) = AsyncStream<OperationLog.UploadReport>.makeStream()
        let relaunched = try OperationLog(engine: engine, service: "oplog", container: container, configuration: configuration) {
            nextSink.yield($0)
        }
        var leftovers = 0
        for await report in nextReports {
            leftovers = report.eventCount
            break
        }
        await relaunched.close()
        let stored = try await store.summary().events
        print("  next launch: 1 upload of the \(leftovers) left; the collector holds \(stored) events, each once")
        guard uploads.count == 3, leftovers == 5, stored == 95 else {
            throw ValidationError("operation logs: expected 3 uploads, 5 left, 95 stored")
        }
    }

    /// Three candidate addresses for one host name: the one that answers is chosen, and the
    /// request goes there with its Host field unchanged.
    static func endpoints(engine: Engine, transport: any Transport, port: Int) async throws {
        print("\nFastest endpoint instead of DNS (seed 003: 選最快的 IP) — api.runway.test on three addresses")
        var configuration = EndpointSelector.Configuration()
        configuration.probesAutomatically = false
        configuration.timeout = .milliseconds(500)
        let selector = EndpointSelector(
            host: "api.runway.test", port: port, candidates: ["127.0.0.3", "127.0.0.2", "127.0.0.1"],
            configuration: configuration)
        for measurement in await selector.probe() {
            let time = measurement.time.map { time in
                String(format: "%.2f ms", Double(time.components.seconds) * 1000 + Double(time.components.attoseconds) / 1e15)
            }
            print("  \(measurement.address): \(time ?? "no answer (nothing listens there)")")
        }
        guard transport.supportsConnectAddress else {
            engine.register(Service(id: "edge", baseURLs: [.release: "http://127.0.0.1:\(port)"], endpoints: selector))
            let response = try await engine.perform(HealthAPI()).get()
            print(
                "  this transport (URLSession) cannot choose an address: requests keep DNS "
                    + "(GET http://127.0.0.1:\(port)/health answered \(response.response.status.code))")
            return
        }
        engine.register(
            Service(id: "edge", baseURLs: [.release: "http://api.runway.test:\(port)"], allowsInsecureHTTP: true, endpoints: selector))
        let response = try await engine.perform(HealthAPI()).get()
        print("  chosen: \(selector.address ?? "DNS"); GET http://api.runway.test:\(port)/health answered \(response.response.status.code) from \(response.json?["address"]?.stringValue ?? "?")")
        guard selector.address == "127.0.0.1" else { throw ValidationError("endpoints: expected 127.0.0.1 to be chosen") }
    }
}

/// `GET /health` on the edge service.
struct HealthAPI: API {
    var service: ServiceID { "edge" }
    var path: String { "/health" }
    var method: HTTPRequest.Method { .get }
}
