import Foundation
import HTTPTypes

/// The engine's content-coding step, in front of the sink a body goes to: every head passes
/// through one rule (``HTTPFields/describingDecodedBody()``), and a body in gzip or deflate is
/// undone here — unless the transport already undid it (``Transport/decodesContent``).
///
/// So an app meets the same head and the same bytes whichever transport carried them, the size
/// cap behind it counts decoded bytes (a small body that inflates past it is refused as it
/// grows), and `deflate` is read one way for all (zlib's format or the bare stream, as
/// browsers read it).
package final class DecodingSink: ResponseSink {
    private struct State {
        /// The current response's decoders, outermost coding first.
        var decoders: [Inflater] = []
        /// The last head handed on, as the engine describes it.
        var head: HTTPResponse?
        /// When the last head arrived: the end of the exchange's time to the first byte.
        var headArrivedAt: ContinuousClock.Instant?
    }

    private let target: any ResponseSink
    private let transportDecodes: Bool
    private let state = Locked(State())

    /// Creates the step in front of `target`, for a transport that undoes content codings
    /// itself (`transportDecodes`) or leaves them to the engine.
    package init(target: any ResponseSink, transportDecodes: Bool) {
        self.target = target
        self.transportDecodes = transportDecodes
    }

    /// The last head handed on (a redirect's, or the final response's), as the engine
    /// describes it.
    package var head: HTTPResponse? { state.withLock { $0.head } }

    /// When the last head arrived.
    package var headArrivedAt: ContinuousClock.Instant? { state.withLock { $0.headArrivedAt } }

    /// Whether this step undoes a coding of the current response (or hands its bytes on as they are).
    package var isDecoding: Bool { state.withLock { !$0.decoders.isEmpty } }

    package func begin(_ head: HTTPResponse) throws {
        let arrived = ContinuousClock.now
        var described = head
        described.headerFields = head.headerFields.describingDecodedBody()
        // The codings this step undoes: those the rule dropped, when the transport left them.
        let dropped = !described.headerFields.contains(.contentEncoding) && !transportDecodes
        let decoders = dropped ? ContentCoding.codings(in: head.headerFields).reversed().compactMap(Inflater.init) : []
        state.withLock { state in
            state.decoders = decoders
            state.head = described
            state.headArrivedAt = arrived
        }
        try target.begin(described)
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        try state.withLock { state in
            try Self.pass(bytes, through: state.decoders[...], to: target)
        }
    }

    /// Ends the body: a coded body must have reached the end of its coding.
    ///
    /// - throws: ``TransportFault/undecodableBody`` for a body cut short with its framing
    ///   intact (a gzip stream without its end).
    package func finish() throws(TransportFault) {
        let complete = state.withLock { $0.decoders.allSatisfy(\.isComplete) }
        if !complete { throw .undecodableBody }
    }

    private static func pass(
        _ bytes: UnsafeRawBufferPointer, through decoders: ArraySlice<Inflater>, to target: any ResponseSink
    ) throws {
        guard let decoder = decoders.first else { return try target.write(bytes) }
        try decoder.inflate(bytes) { decoded in try pass(decoded, through: decoders.dropFirst(), to: target) }
    }
}
