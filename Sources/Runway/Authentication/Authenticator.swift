public import HTTPTypes

/// How a service's requests carry a credential, and how an expired credential is renewed: the
/// app's half of ``Authentication``.
///
/// The engine asks ``credential()`` once (a keychain read, say), applies the credential to each
/// request it sends to the service, and, when an answer says the credential has expired, calls
/// ``refresh(_:)`` **once** for every load that met the expiry together; those loads are sent
/// again with the new credential. Signing runs after ``apply(_:to:)``, so a signature covers the
/// credential.
///
/// For example, a bearer token renewed by a token endpoint of the same service:
///
/// ```swift
/// struct TokenAuthenticator: Authenticator {
///     let keychain: Keychain
///     let engine: Engine
///
///     func credential() async throws -> Token? { try keychain.token() }
///
///     func apply(_ token: Token, to request: inout HTTPRequest) {
///         request.headerFields[.authorization] = "Bearer \(token.access)"
///     }
///
///     func refresh(_ expired: Token?) async throws -> Token {
///         // RefreshTokenAPI declares `authenticates: false`, so this call skips the authenticator.
///         let answer = try await engine.perform(RefreshTokenAPI(), params: ["refresh": .string(expired?.refresh ?? "")])
///             .get()
///         let fresh = try JSONDecoder().decode(Token.self, from: answer.body)
///         try keychain.save(fresh)
///         return fresh
///     }
/// }
/// ```
public protocol Authenticator: Sendable {
    /// What a request carries to prove who sends it: a token, a token pair, a session.
    associatedtype Credential: Sendable

    /// The credential the app holds now (from the keychain, say), or `nil` when it has none, in
    /// which case ``refresh(_:)`` is asked for one before the first request is sent.
    func credential() async throws -> Credential?

    /// Puts `credential` on `request`: usually the `Authorization` header field.
    func apply(_ credential: Credential, to request: inout HTTPRequest)

    /// Makes a new credential to replace `expired` (`nil` when there was none). Called once for
    /// all the loads that found the credential expired at the same time; a thrown error fails
    /// each of them with ``RunwayError/unauthenticated(reason:)``.
    func refresh(_ expired: Credential?) async throws -> Credential

    /// Whether `response` says the credential it was sent with is no longer accepted. Default: a
    /// 401 status.
    func isAuthenticationFailure(_ response: HTTPResponse) -> Bool

    /// Whether `credential` must be refreshed before it is used at all (an expiry date that has
    /// passed), so no request is sent only to be refused. Default: `false`.
    func requiresRefresh(_ credential: Credential) -> Bool

    /// The header fields ``apply(_:to:)`` writes. A service whose signer writes one of them is
    /// refused when it is registered (the signature would overwrite the credential), as is one
    /// whose common headers set one. Default: `Authorization`.
    var credentialFields: Set<HTTPField.Name> { get }
}

extension Authenticator {
    public var credentialFields: Set<HTTPField.Name> { [.authorization] }
    public func isAuthenticationFailure(_ response: HTTPResponse) -> Bool { response.status.code == 401 }
    public func requiresRefresh(_ credential: Credential) -> Bool { false }
}
