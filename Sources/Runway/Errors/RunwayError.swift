import Foundation

/// Every way a Runway call can fail, as one typed error.
///
/// Delegates and `async` callers receive exactly this type, so a `switch` over it is exhaustive
/// and each case carries what is needed to react: the validator's reason, the HTTP status and
/// body, the business code and message from the service's convention.
///
/// For example:
///
/// ```swift
/// do {
///     let rows = try await manager.load(reformedBy: ListingRowsReformer())
/// } catch .business(let code, let message) {
///     showBanner(message)
/// } catch {
///     showBanner(error.localizedMessage())
/// }
/// ```
public enum RunwayError: Error, Sendable, Hashable {
    /// The params validator refused the params; nothing left the device.
    case paramsInvalid(reason: String)
    /// The params cannot be written as a query, form or JSON body (for example `NaN`, or an
    /// object inside a query); nothing left the device.
    case paramsUnencodable(reason: String)
    /// The request could not be built: a base URL without a scheme or host, an unknown
    /// service, a path that is not a path.
    case invalidRequest(reason: String)
    /// An interceptor's `shouldCall` vetoed the load; nothing left the device.
    case vetoed(reason: String)
    /// The server answered with a status outside 2xx; the body is kept for diagnosis.
    case httpStatus(code: Int, body: Data)
    /// The service's response convention reported a business error.
    case business(code: Int, message: String)
    /// The body is not what the API expects: not JSON, or refused by the response validator.
    case invalidResponse(reason: String)
    /// A 2xx response with an empty body where the API expects content.
    case noContent
    /// No complete response arrived within the API's timeout.
    case timeout
    /// The server could not be reached: connection refused, host unreachable, name not found.
    case noNetwork(reason: NoNetworkReason)
    /// The connection broke after the request was sent, before the response was complete.
    case connectionLost
    /// The load was cancelled: by the caller, by a newer load under the
    /// ``RequestStrategy/cancelInFlight`` strategy, or by the caller's task.
    case cancelled
    /// Plain HTTP to a host other than loopback, which the service has not allowed; refused
    /// before any connection is opened.
    case insecureConnection(host: String)
    /// The server's public key matched none of the host's pins; nothing was sent.
    case pinningFailed(host: String)
    /// The engine refused to follow a redirect: to another origin (unless the API's
    /// ``RedirectPolicy`` allows it), to a scheme other than HTTP(S), or past the policy's limit.
    /// A hop from HTTPS to plain HTTP is ``insecureConnection(host:)``.
    case redirectRefused(location: String, reason: String)
    /// The service's ``Authentication`` could not provide a credential: its refresh failed, or
    /// the server refused the credential the refresh had just produced. Every load waiting on
    /// that refresh receives this error.
    case unauthenticated(reason: String)
    /// The user signed out or another signed in (``Authentication/reset()``) after the request
    /// was made for the one before: it is not sent again, or its answer kept, under another
    /// identity. A load the app still wants is started again by the app, for the new user.
    case userChanged
    /// The TLS handshake failed: an untrusted or invalid certificate, or no common protocol.
    case tlsFailure(reason: String)
    /// The transport failed in a way none of the other cases describe.
    case transport(description: String)
    /// The service's ``ServiceErrorHandler`` ended the load with one of its common errors — a
    /// session that ended, an upgrade required, maintenance — decided once for every API of the
    /// service.
    case service(ServiceFailure)

    /// Why the server could not be reached.
    public enum NoNetworkReason: String, Sendable, Hashable {
        /// The host answered but nothing listens on the port.
        case connectionRefused
        /// No route to the host, or the device is offline.
        case unreachable
        /// The host name could not be resolved.
        case dnsFailure
    }

    /// Whether this is a cancellation, which a delegate usually ignores rather than shows.
    public var isCancellation: Bool { self == .cancelled }

    /// Whether the server could not be reached at all (what stale-if-offline answers).
    public var isUnreachable: Bool {
        switch self {
        case .noNetwork, .connectionLost: return true
        default: return false
        }
    }

    /// Whether the failure speaks against the address the request was sent to (when the engine
    /// chose it): it could not be reached, its TLS or pins failed, its connection broke, or it did
    /// not answer in time.
    var faultsAddress: Bool {
        switch self {
        case .noNetwork, .connectionLost, .timeout, .tlsFailure, .pinningFailed: return true
        default: return false
        }
    }

    /// Whether the failure came before any of the request was sent — no connection, or a TLS
    /// handshake or pin that failed — so sending it elsewhere repeats nothing, whatever its method.
    var leftNothingSent: Bool {
        switch self {
        case .noNetwork(.connectionRefused), .noNetwork(.unreachable), .tlsFailure, .pinningFailed: return true
        default: return false
        }
    }

    /// Whether trying the same request again may succeed: a 408 or 5xx status, a timeout, or a
    /// connection that could not be made or was lost.
    public var isTransient: Bool {
        switch self {
        case .httpStatus(let code, _): return code == 408 || (500...599).contains(code)
        case .noNetwork, .connectionLost, .timeout: return true
        default: return false
        }
    }
}
