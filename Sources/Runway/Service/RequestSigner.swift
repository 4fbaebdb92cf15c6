import Foundation
public import HTTPTypes

/// Signs a request just before it is sent, so the server can tell it comes from the real app.
///
/// The engine calls the service's signer once per attempt, after the request is fully built
/// (common params and headers included), so retries carry a fresh signature. Signers add header
/// fields; they must not change the method, path or body they sign.
public protocol RequestSigner: Sendable {
    /// Adds the signature to `request`.
    ///
    /// - parameters:
    ///   - request: The request to sign; add header fields to it.
    ///   - body: The exact body bytes that will be sent, or `nil` (no body, or a body that is not
    ///     held in memory: then ``SigningContext/bodySHA256`` is its hash).
    ///   - context: The API's name and the service, which some signatures include.
    /// - throws: Any error; the engine reports it as ``RunwayError/invalidRequest(reason:)``.
    func sign(_ request: inout HTTPRequest, body: Data?, context: SigningContext) throws

    /// Whether `response` refused a request this signer signed because of the time it was signed
    /// at, and the signer has corrected its clock from it.
    ///
    /// When it returns `true`, the engine signs the request again at once, once per load — not a
    /// retry of the API's policy, and never shown to the service's authenticator: a device whose
    /// clock is wrong is not a user whose sign-in expired. The default returns `false`.
    ///
    /// - parameters:
    ///   - response: The answer's head.
    ///   - body: The answer's body (empty for a download, whose body went to its file).
    func correctsClock(after response: HTTPResponse, body: Data) -> Bool

    /// The header fields this signer writes. A service whose credential or common headers use
    /// one of them is refused when it is registered: the signature would overwrite them.
    /// Default: none declared.
    var writtenFields: Set<HTTPField.Name> { get }
}

extension RequestSigner {
    /// None declared.
    public var writtenFields: Set<HTTPField.Name> { [] }

    /// Never: a signer without a clock to correct.
    public func correctsClock(after response: HTTPResponse, body: Data) -> Bool { false }
}

/// What a signer may include beyond the request itself.
public struct SigningContext: Sendable {
    /// The API's name, as ``API/name`` gives it.
    public var apiName: String
    /// The service the request goes to.
    public var service: ServiceID
    /// The attempt number, 1 for the first try.
    public var attempt: Int
    /// The lowercase hex SHA-256 of a body that streams from files (an upload, a multipart form),
    /// read once before the first attempt, so signers need not read it; `nil` when the body, if
    /// any, is passed to the signer in memory.
    public var bodySHA256: String?

    /// Creates a context, for testing a signer on its own.
    public init(apiName: String, service: ServiceID, attempt: Int, bodySHA256: String? = nil) {
        self.apiName = apiName
        self.service = service
        self.attempt = attempt
        self.bodySHA256 = bodySHA256
    }
}
