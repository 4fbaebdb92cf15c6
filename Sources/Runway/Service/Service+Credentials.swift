extension Service {
    /// Who a service's requests are from: the credential, the signature over each request, and
    /// the cookies the service sets.
    ///
    /// They belong together because each writes header fields on every request:
    /// ``Engine/register(_:)`` refuses a service whose signer writes a field its credential uses
    /// (``RequestSigner/writtenFields``, ``Authenticator/credentialFields``), and
    /// ``Authentication/reset()`` empties the cookies with the credential.
    public struct Credentials: Sendable {
        /// The credential every request carries (unless its API opts out with
        /// ``API/authenticates``), refreshed once when the server says it expired; `nil` sends
        /// none.
        public var authentication: Authentication?
        /// Signs every request, after the credential is applied, so the signature covers it;
        /// `nil` sends unsigned requests.
        public var signer: (any RequestSigner)?
        /// The cookies the service keeps; `nil` keeps none. ``Authentication/reset()`` of
        /// ``authentication`` empties it.
        public var cookies: CookieJar?

        /// Creates the credentials of a service; none of them by default.
        public init(authentication: Authentication? = nil, signer: (any RequestSigner)? = nil, cookies: CookieJar? = nil) {
            self.authentication = authentication
            self.signer = signer
            self.cookies = cookies
        }
    }
}
