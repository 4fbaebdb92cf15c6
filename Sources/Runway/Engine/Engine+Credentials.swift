import HTTPTypes

extension Engine {
    /// Adapts, credentials, gives the cookies to and signs a request to the service's own origin:
    /// adapters first, then the credential, so that the signature covers both.
    ///
    /// - returns: The header fields and query params the credential set, redacted from what app
    ///   code sees and from every record.
    func applyCredentials(
        to request: inout PreparedRequest, api: some API, service: Service, adapters: [any RequestAdapter],
        credential: CredentialLease?, bodyDigest: String?, attempt: Int, hop: Int
    ) async throws(RunwayError) -> CredentialRedaction.Marks {
        if !adapters.isEmpty {
            try await adapters.adapt(
                &request.head, context: AdaptingContext(apiName: api.name, service: service.id, attempt: attempt, hop: hop))
        }
        var marks = CredentialRedaction.Marks()
        if let credential {
            let before = request.head
            credential.apply(&request.head)
            marks = CredentialRedaction.changes(from: before, to: request.head)
        }
        if let jar = service.credentials.cookies, let url = request.head.url, let cookie = jar.field(for: url) {
            request.head.headerFields[.cookie] = cookie
        }
        if let signer = service.credentials.signer {
            let inMemory = request.body?.data
            do {
                try signer.sign(
                    &request.head, body: inMemory,
                    context: SigningContext(
                        apiName: api.name, service: service.id, attempt: attempt,
                        bodySHA256: request.body != nil && inMemory == nil ? bodyDigest : nil))
            } catch let error as RequestSignature.FormatError {
                throw RunwayError.invalidRequest(reason: "signing failed: \(error.reason)")
            } catch {
                throw RunwayError.invalidRequest(reason: "signing failed: \(type(of: error))")
            }
        }
        return marks
    }

    /// The service's adapters, then the API's.
    static func adapters(of api: some API, service: Service) -> [any RequestAdapter] {
        let own = api.adapters
        return own.isEmpty ? service.adapters : service.adapters + own
    }
}
