import Foundation
import HTTPTypes

/// Gathers a response body in memory, up to a limit: the one place that bounds what a response
/// may cost in memory, whichever transport carries it.
///
/// The engine streams into one every body that does not go to a download's file, with the API's
/// ``API/maximumResponseSize``, behind its content-coding step (``DecodingSink``), so the limit
/// counts decoded bytes; a transport given no sink at all gathers into one without a limit
/// (``BodyGathering``). A head whose `Content-Length` already says too much is
/// refused before a byte of its body is read, and a body that grows past the limit stops the
/// exchange at the first chunk over it — the transport closes the connection instead of reading
/// the rest. A body in a content coding no transport undid (``ContentCoding``) is refused at its
/// first byte; a head alone (HEAD, 204, 304) may name any coding.
package final class BodyCollector: ResponseSink {
    private struct State {
        var body = Data()
        /// The current head's first content coding that no transport undid.
        var foreignCoding: String?
    }

    private let limit: Int
    /// Whether the request was a `HEAD`, whose answer has no body whatever its `Content-Length`.
    private let answersHead: Bool
    private let state = Locked(State())

    /// Creates a collector that refuses bodies of more than `limit` bytes (for a `HEAD` request,
    /// `answersHead`: its `Content-Length` tells the size of a body that does not follow).
    package init(limit: Int = .max, answersHead: Bool = false) {
        self.limit = limit
        self.answersHead = answersHead
    }

    /// The body gathered so far (the last response's: each head starts it again).
    package var collected: Data { state.withLock { $0.body } }

    /// A whole body a transport kept instead of streaming, after ``begin(_:)`` took its head:
    /// the same refusals as ``write(_:)``, without copying it.
    package func accept(whole body: Data) throws(RunwayError) -> Data {
        if body.isEmpty { return body }
        let refusal = state.withLock { state -> RunwayError? in
            if let coding = state.foreignCoding { return Self.foreign(coding) }
            return body.count > limit ? tooLarge : nil
        }
        if let refusal { throw refusal }
        return body
    }

    package func begin(_ head: HTTPResponse) throws {
        // No body follows a HEAD, a 1xx, a 204 or a 304 (RFC 9110 §6.4.1): their Content-Length
        // describes another answer.
        let bodyless = answersHead || head.status.code < 200 || head.status.code == 204 || head.status.code == 304
        if !bodyless, let declared = head.headerFields.value(of: .contentLength).flatMap(Int.init), declared > limit {
            throw tooLarge
        }
        let foreignCoding = ContentCoding.notUndone(in: head.headerFields).first
        state.withLock { state in
            state.body.removeAll(keepingCapacity: true)
            state.foreignCoding = foreignCoding
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        let refusal = state.withLock { state -> RunwayError? in
            if let coding = state.foreignCoding { return Self.foreign(coding) }
            guard bytes.count <= limit - state.body.count else { return tooLarge }
            state.body.append(contentsOf: bytes)
            return nil
        }
        if let refusal { throw refusal }
    }

    /// A body in `coding`, which the engine did not offer and no transport undid.
    static func foreign(_ coding: String) -> RunwayError {
        RunwayError(.unofferedCoding(coding))
    }

    private var tooLarge: RunwayError {
        RunwayError(.bodyTooLarge(limit: limit))
    }
}
