import Foundation
import HTTPTypes

/// Gathers a response body in memory, up to a limit: the one place that bounds what a response
/// may cost in memory, whichever transport carries it.
///
/// The engine hands one to the transport for every exchange whose body is not streamed to a
/// download's file, with the API's ``API/maximumResponseSize``; a transport given no sink at all
/// gathers into one without a limit. A head whose `Content-Length` already says too much is
/// refused before a byte of its body is read, and a body that grows past the limit stops the
/// exchange at the first chunk over it — the transport closes the connection instead of reading
/// the rest.
package final class BodyCollector: ResponseSink {
    private let limit: Int
    private let body = Locked(Data())

    /// Creates a collector that refuses bodies of more than `limit` bytes.
    package init(limit: Int = .max) {
        self.limit = limit
    }

    /// Where a transport streams a response body: the request's `sink` when it has one, or a new
    /// collector without a limit, returned as well so that its body can be handed back.
    package static func destination(for sink: (any ResponseSink)?) -> (sink: any ResponseSink, collector: BodyCollector?) {
        if let sink { return (sink, nil) }
        let collector = BodyCollector()
        return (collector, collector)
    }

    /// The body gathered so far (the last response's: each head starts it again).
    package var collected: Data { body.withLock { $0 } }

    /// The body of an exchange whose transport returned `returned`: what was gathered here, or —
    /// from a transport that kept the body instead of streaming it into this sink — `returned`,
    /// under the same limit.
    package func body(orReturned returned: Data) throws(RunwayError) -> Data {
        let gathered = collected
        if !gathered.isEmpty || returned.isEmpty { return gathered }
        guard returned.count <= limit else { throw tooLarge }
        return returned
    }

    package func begin(_ head: HTTPResponse) throws {
        if let declared = head.headerFields[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge
        }
        body.withLock { $0.removeAll(keepingCapacity: true) }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        let fits = body.withLock { body -> Bool in
            guard bytes.count <= limit - body.count else { return false }
            body.append(contentsOf: bytes)
            return true
        }
        if !fits { throw tooLarge }
    }

    private var tooLarge: RunwayError {
        .invalidResponse(reason: "the body is larger than allowed (\(limit) bytes)")
    }
}
