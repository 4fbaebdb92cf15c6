import Foundation
public import HTTPTypes

/// A landed response as the manager keeps it: the bytes, the HTTP response, and the JSON when
/// the API expects JSON.
///
/// Reformers read it to make what one view needs. ``api`` tells which API it came from, so one
/// reformer can normalise several APIs whose bodies use different keys.
public struct RawResponse: Sendable {
    /// The API that was called.
    public let api: any API
    /// The request that answered: the last redirect hop of the last attempt, as sent — except
    /// that the values of the fields carrying who asks (`Authorization`, `Proxy-Authorization`,
    /// `Cookie`, the signature, and every field the service's ``Authenticator`` set) read
    /// `<redacted>`, so nothing an app logs or dumps holds a credential. Its ``url`` says where
    /// the answer came from.
    public let request: HTTPRequest
    /// The HTTP response head.
    public let response: HTTPResponse
    /// The body bytes, exactly as received (after content decoding).
    public let body: Data
    /// The body parsed once at landing, when the API's format is ``ResponseFormat/json``.
    public let json: JSON?
    /// How many attempts the load took, 1 when the first succeeded (0 for a cache hit).
    public let attempts: Int
    /// Whether the network or a cache tier answered, and how old cached data is.
    public let origin: ResponseOrigin
    /// How long each phase of the load took — the cache lookup, the answering exchange's phases,
    /// the parse and, once a manager has reformed it, the reform — and which were skipped (a
    /// cache hit skips the exchange; a reused connection, the connection's setup).
    public var timings: PhaseTimings

    /// Creates a response; the engine does this at landing, and stub-based tests may too.
    public init(
        api: any API, request: HTTPRequest, response: HTTPResponse, body: Data, json: JSON?, attempts: Int = 1,
        origin: ResponseOrigin = .network, timings: PhaseTimings = PhaseTimings()
    ) {
        self.timings = timings
        self.api = api
        self.request = request
        self.response = response
        self.body = body
        self.json = json
        self.attempts = attempts
        self.origin = origin
    }

    /// The URL that answered: after redirects, the last hop's.
    public var url: URL? { request.url }

    /// The HTTP status.
    public var status: HTTPResponse.Status { response.status }

    /// The `data` member of a `{"code":…,"data":…}` envelope, or the whole JSON when there is
    /// none.
    public var payload: JSON? { json?["data"] ?? json }
}
