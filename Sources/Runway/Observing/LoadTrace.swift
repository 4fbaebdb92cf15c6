import Foundation
import HTTPTypes
import Tracing

/// The spans of one load: the load's own span, and the parent its children start under.
///
/// Only an engine with a tracer (see ``Engine/init(transport:cache:logger:network:metrics:tracer:recorder:sleep:)``)
/// makes one; without, every `LoadTrace?` is `nil` and tracing costs a `nil` check. Attribute
/// names follow OpenTelemetry's HTTP semantic conventions where one exists, and Runway's own
/// (`runway.*`) where none does. No attribute holds a header value, a body or a query value.
struct LoadTrace: Sendable {
    let tracer: any Tracer
    /// The span children start under.
    let parent: any Span

    /// Starts a load's span under the caller's current context (an app's tap, a server's
    /// request), so that one trace runs from there through the load.
    static func start(_ api: some API, loadID: LoadID, tracer: any Tracer) -> LoadTrace {
        let span = tracer.startAnySpan(api.name, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        span.attributes["runway.api"] = api.name
        span.attributes["runway.service"] = api.service.rawValue
        // An app may number its loads itself (`LoadID(rawValue:)`): one past `Int64` goes as text.
        if let number = Int64(exactly: loadID.rawValue) {
            span.attributes["runway.load_id"] = number
        } else {
            span.attributes["runway.load_id"] = "\(loadID.rawValue)"
        }
        span.attributes["http.request.method"] = api.method.rawValue
        return LoadTrace(tracer: tracer, parent: span)
    }

    /// Starts a child span of ``parent``.
    func child(_ name: String, kind: SpanKind = .internal) -> LoadTrace {
        LoadTrace(tracer: tracer, parent: tracer.startAnySpan(name, context: parent.context, ofKind: kind))
    }

    /// Sets an attribute of this trace's span.
    func set(_ key: String, _ value: (any SpanAttributeConvertible)?) {
        parent.attributes[key] = value?.toSpanAttribute()
    }

    /// Ends this trace's span.
    func end() { parent.end() }

    /// Ends this trace's span as a load's: what answered it, its status, and its error. (A load
    /// that joined an identical one in flight says `runway.coalesced`; the requests are in the
    /// trace of the load it joined.)
    func end(_ result: Result<RawResponse, RunwayError>) {
        switch result {
        case .success(let response):
            set("http.response.status_code", Int64(response.status.code))
            switch response.origin {
            case .network:
                set("runway.origin", "network")
            case .cache(let tier, _, let isStale):
                set("runway.origin", "cache")
                set("runway.cache.tier", tier.rawValue)
                if isStale { set("runway.cache.stale", true) }
            case .revalidated(let tier):
                set("runway.origin", "revalidated")
                set("runway.cache.tier", tier.rawValue)
            }
        case .failure(let error):
            fail(error)
        }
        end()
    }

    /// Marks this trace's span as failed with `error` (by its stable key, never its message,
    /// which may quote a body).
    func fail(_ error: RunwayError) {
        set("error.type", Self.errorType(error))
        if case .httpStatus(let code, _) = error { set("http.response.status_code", Int64(code)) }
        parent.setStatus(SpanStatus(code: .error))
    }

    static func errorType(_ error: RunwayError) -> String {
        if case .httpStatus(let code, _) = error { return String(code) }
        return error.messageKey
    }

    /// Sets the attributes of a request on the wire: method, server, redacted URL, resend count.
    func describe(_ request: HTTPRequest, attempt: Int, hop: Int) {
        set("http.request.method", request.method.rawValue)
        let host = request.authority.map(AuthorityHost.of)
        set("server.address", host)
        if let authority = request.authority, let port = AuthorityHost.port(of: authority, scheme: request.scheme) {
            set("server.port", Int64(port))
        }
        set("url.full", Self.redactedURL(request))
        set("runway.attempt", Int64(attempt))
        if hop > 0 { set("runway.redirect.hop", Int64(hop)) }
        let resends = attempt - 1 + hop
        if resends > 0 { set("http.request.resend_count", Int64(resends)) }
    }

    /// The URL of `request` with every query value and any user information replaced by
    /// `REDACTED`, as OpenTelemetry's conventions ask for values that may be credentials.
    static func redactedURL(_ request: HTTPRequest) -> String {
        let scheme = request.scheme ?? "https"
        let authority = request.authority.map { authority in
            authority.lastIndex(of: "@").map { "REDACTED:REDACTED@" + authority[authority.index(after: $0)...] } ?? authority
        } ?? ""
        return "\(scheme)://\(authority)" + QueryRedaction.redactingValues(inURL: request.path ?? "/")
    }
}

/// Query values replaced by `REDACTED`, as OpenTelemetry's conventions ask for values that may
/// be credentials: what every span attribute holding a URL or a query says instead.
package enum QueryRedaction {
    /// `url` (absolute, or a path with a query) with each query value redacted.
    package static func redactingValues(inURL url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        return url[...question] + redactingValues(inQuery: String(url[url.index(after: question)...]))
    }

    /// `query` (without its `?`) with each value redacted; names stay.
    package static func redactingValues(inQuery query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            return pair[..<equals] + "=REDACTED"
        }.joined(separator: "&")
    }
}

/// Writes a tracer's propagation fields (W3C `traceparent` and `tracestate` with an
/// OpenTelemetry tracer) into a request's header fields, replacing any of the same name.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        fields[name] = value
    }
}
