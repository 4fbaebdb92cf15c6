public import HTTPTypes

/// Changes a request before it leaves: a header read at send time (a trace id, a device id, an
/// `Accept-Language` that follows the app's setting), a param rewritten or added.
///
/// Attach adapters to a ``Service`` (``Service/adapters``: every API of it, through every entry
/// point — managers, ``Engine/perform(_:params:body:loadID:ignoringCache:)-(_,Parameters,_,_,_)``, uploads, downloads) or to
/// an ``API`` (``API/adapters``). The service's run first, then the API's, each list in order.
/// They run off the main actor, on **every attempt** (a retry, a renewed credential, a corrected
/// clock) and on **every redirect hop that stays on the service's origin** — never on a hop to
/// another origin, which carries no credential either — and **before the credential and the
/// signer**, so a signature covers what they add. Each starts from the request as built, so
/// nothing an adapter did to one attempt carries over to the next.
///
/// The response cache is looked up before adapters run, so what they add cannot be part of a
/// cache key. An adapter may write who is asking (an `Authorization` for the app's current user),
/// so unless it says it does not (``writesCredentials`` `false`), an API it adapts is cached only
/// under a ``CachePolicy/sensitiveComponent`` — one user's answer is never served to the next.
/// A header it adds that changes the answer belongs in ``CachePolicy/varyingHeaderFields``.
///
/// ```swift
/// struct TraceID: RequestAdapter {
///     var writesCredentials: Bool { false }
///     func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {
///         request.headerFields[HTTPField.Name("X-Trace-Id")!] = UUID().uuidString
///     }
/// }
/// ```
///
/// An adapter that throws ends the load: a ``RunwayError`` as it is, anything else as
/// ``RunwayError/invalidRequest(reason:)`` naming the adapter. Nothing is sent.
public protocol RequestAdapter: Sendable {
    /// Changes the params of an attempt before its request is built (they go into the query or
    /// the body, as the API's ``API/paramEncoding`` says). Default: leaves them.
    func adaptParams(_ params: inout Parameters, context: AdaptingContext) async throws
    /// Changes one request — the first of an attempt or a same-origin redirect hop — before its
    /// credential and signature are added. Default: leaves it.
    func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws
    /// Whether the adapter may write who is asking: a credential, a cookie, a user or session
    /// id. Such a request's answer is cached only under the policy's
    /// ``CachePolicy/sensitiveComponent``. Default `true`: an adapter that only adds a trace id
    /// or a device's language says `false`, and its APIs cache as usual.
    var writesCredentials: Bool { get }
}

extension RequestAdapter {
    public var writesCredentials: Bool { true }
    public func adaptParams(_ params: inout Parameters, context: AdaptingContext) async throws {}
    public func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws {}
}

/// What an adapter knows of the request it changes.
public struct AdaptingContext: Sendable, Hashable {
    /// The API's ``API/name``.
    public let apiName: String
    /// The API's service.
    public let service: ServiceID
    /// The attempt, from 1: each retry, credential renewal or clock correction is a new one.
    public let attempt: Int
    /// The redirect hop within the attempt: 0 for its first request.
    public let hop: Int

    /// Creates a context, for testing an adapter on its own.
    public init(apiName: String, service: ServiceID, attempt: Int, hop: Int) {
        self.apiName = apiName
        self.service = service
        self.attempt = attempt
        self.hop = hop
    }
}

extension [any RequestAdapter] {
    /// Runs every adapter's ``RequestAdapter/adaptParams(_:context:)`` in order.
    func adaptParams(_ params: inout Parameters, context: AdaptingContext) async throws(RunwayError) {
        for adapter in self {
            do { try await adapter.adaptParams(&params, context: context) } catch {
                throw Self.failure(error, of: adapter)
            }
        }
    }

    /// Runs every adapter's ``RequestAdapter/adapt(_:context:)`` in order.
    func adapt(_ request: inout HTTPRequest, context: AdaptingContext) async throws(RunwayError) {
        for adapter in self {
            do { try await adapter.adapt(&request, context: context) } catch {
                throw Self.failure(error, of: adapter)
            }
        }
    }

    private static func failure(_ error: any Error, of adapter: any RequestAdapter) -> RunwayError {
        if let error = error as? RunwayError { return error }
        return .invalidRequest(reason: "the request adapter \(type(of: adapter)) failed: \(error)")
    }
}
