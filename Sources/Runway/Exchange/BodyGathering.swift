import Foundation
import HTTPTypes

/// Where a transport given no ``TransportRequest/responseSink`` (a caller without an engine)
/// gathers the body: the engine's own content-coding step in front of a collector without a
/// limit, so that such a caller meets the same head and bytes an engine hands on.
package struct BodyGathering: Sendable {
    /// What the transport streams the response into.
    package let sink: DecodingSink
    private let collector: BodyCollector

    /// The sink a transport streams into — the request's, or a new gathering's — and the
    /// gathering, when one was made.
    package static func destination(
        for request: TransportRequest, transportDecodes: Bool
    ) -> (sink: any ResponseSink, gathering: BodyGathering?) {
        if let sink = request.responseSink { return (sink, nil) }
        let collector = BodyCollector()
        let gathering = BodyGathering(sink: DecodingSink(target: collector, transportDecodes: transportDecodes), collector: collector)
        return (gathering.sink, gathering)
    }

    /// The whole response whose head came off the wire as `head`: the head as the engine
    /// describes it, and the decoded body.
    ///
    /// - throws: ``TransportFault/undecodableBody`` for a coded body cut short; what the
    ///   collector refuses of a head the sink had not seen yet.
    package func response(head: HTTPResponse, httpVersion: String?) throws -> TransportResponse {
        // A head the transport did not stream (a challenged 401) passes the same step.
        if sink.head == nil { try sink.begin(head) }
        try sink.finish()
        return TransportResponse(head: sink.head ?? head, body: collector.collected, httpVersion: httpVersion)
    }
}
