import Runway
import Tracing

/// The tracer the transport's clients hand AsyncHTTPClient: AsyncHTTPClient's own span of each
/// request goes to the app's tracer, under the request's span in the load's trace (the engine
/// runs each exchange with that span as the current context), and injects nothing.
///
/// AsyncHTTPClient's async API adds the current context to every request it sends (a second
/// `traceparent`, after the request was signed, and to every origin); the engine already put the
/// load's context on the requests it belongs on, under the signature. So this tracer's
/// ``inject(_:into:using:)`` does nothing, and everything else goes to `base`.
struct RequestSpanTracer: Tracer {
    /// Where spans go.
    let tracer: any Tracer

    init(base: any Tracer) {
        self.tracer = base
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> ForwardingSpan {
        ForwardingSpan(
            base: tracer.startSpan(
                operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line))
    }

    /// Nothing: AsyncHTTPClient never flushes, and the app flushes its own tracer.
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {}

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        tracer.extract(carrier, into: &context, using: extractor)
    }
}

/// A span of another tracer, as a concrete type (``RequestSpanTracer``'s `Span`).
struct ForwardingSpan: Span {
    let base: any Span

    var context: InstrumentationContext { base.context }

    var operationName: String {
        get { base.operationName }
        nonmutating set { base.operationName = newValue }
    }

    /// AsyncHTTPClient records the URL and its query as they are; their query values are
    /// redacted on the way in, so that no attribute holds a credential sent in a query.
    var attributes: SpanAttributes {
        get { base.attributes }
        nonmutating set {
            var scrubbed = newValue
            if case .string(let url)? = scrubbed["url.full"]?.toSpanAttribute() {
                scrubbed["url.full"] = QueryRedaction.redactingValues(inURL: url)
            }
            if case .string(let query)? = scrubbed["url.query"]?.toSpanAttribute() {
                scrubbed["url.query"] = QueryRedaction.redactingValues(inQuery: query)
            }
            base.attributes = scrubbed
        }
    }

    var isRecording: Bool { base.isRecording }

    func setStatus(_ status: SpanStatus) { base.setStatus(status) }

    func addEvent(_ event: SpanEvent) { base.addEvent(event) }

    func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        base.recordError(error, attributes: attributes, at: instant())
    }

    func addLink(_ link: SpanLink) { base.addLink(link) }

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { base.end(at: instant()) }
}
