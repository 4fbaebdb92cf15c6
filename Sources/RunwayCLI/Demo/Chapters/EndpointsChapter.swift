import Foundation
import HTTPTypes
import Runway

extension DemoChapter {
    /// Three candidate addresses for one host name: the one that answers is chosen, and the
    /// request goes there with its Host field unchanged (選最快的 IP).
    static let endpoints = DemoChapter("endpoints", "The fastest endpoint instead of DNS (seed 003: 選最快的 IP)", needsInProcessServer: true) { context, log in
        var probing = EndpointSelector.Probing()
        probing.probesAutomatically = false
        probing.timeout = .milliseconds(500)
        let selector = EndpointSelector(
            host: "api.runway.test", port: context.port, candidates: ["127.0.0.3", "127.0.0.2", "127.0.0.1"],
            probing: probing)
        let measurements = await selector.probe()
        for measurement in measurements {
            log.say("\(measurement.address): \(measurement.time.map { "connected in \(readable(milliseconds: $0.milliseconds))" } ?? "no answer (nothing listens there)")")
        }
        log.figure("answered", .int(measurements.filter { $0.time != nil }.count))
        let edge = Service(
            id: "edge", baseURLs: [.release: "http://api.runway.test:\(context.port)"],
            connection: .init(allowsInsecureHTTP: true, endpoints: selector))
        guard context.wire.supportsConnectAddress else {
            do {
                try context.engine.register(edge)
                try log.require(false, "a transport that cannot choose an address must refuse the selector")
            } catch let error as RunwayError {
                log.say("this transport (URLSession) cannot choose an address, so registering refuses the selector: \(error.localizedMessage())")
            }
            return
        }
        try context.engine.register(edge)
        let response = try await context.engine.perform(HealthAPI()).get()
        let servedBy = response.json?["address"]?.stringValue ?? "?"
        log.say("chosen: \(selector.address ?? "DNS"); GET http://api.runway.test:\(context.port)/health → \(response.status.code) from \(servedBy), "
            + "Host still api.runway.test")
        log.figure("chosen", .string(selector.address ?? "DNS"))
        try log.require(selector.address == "127.0.0.1" && servedBy == "127.0.0.1", "expected 127.0.0.1 to be chosen and to answer")
    }
}

/// `GET /health` on the edge service.
struct HealthAPI: API {
    var service: ServiceID { "edge" }
    var path: String { "/health" }
    var method: HTTPRequest.Method { .get }
}
