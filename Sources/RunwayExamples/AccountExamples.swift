import Foundation
public import HTTPTypes
public import Runway

extension ServiceID {
    /// The account service of the examples: a bearer token, refreshed at its token endpoint.
    public static let account: ServiceID = "account"
}

/// The account service, whose requests carry `authentication`'s token.
public func accountService(baseURL: String, authentication: Authentication) -> Service {
    Service(
        id: .account,
        environment: .develop,
        baseURLs: [.develop: baseURL, .release: "https://account.example.com"],
        credentials: .init(authentication: authentication))
}

/// A bearer token that the token endpoint renews: what an app writes once for its account API.
/// A real app reads and saves `stored` in the keychain.
public struct TokenAuthenticator: Authenticator {
    let engine: Engine
    let refreshToken: String
    let stored: String?

    /// Creates the authenticator; `stored` is the access token the app holds at launch.
    public init(engine: Engine, refreshToken: String, stored: String?) {
        self.engine = engine
        self.refreshToken = refreshToken
        self.stored = stored
    }

    public func credential() async throws -> String? { stored }

    public func apply(_ token: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(token)"
    }

    public func refresh(_ expired: String?) async throws -> String {
        let answer = try await engine.perform(RefreshTokenAPI(), params: ["refresh_token": .string(refreshToken)]).get()
        guard let token = answer.json?["access_token"]?.stringValue else {
            throw RunwayError.invalidResponse(reason: "the token endpoint sent no access_token")
        }
        return token
    }
}

/// The token endpoint. It is on the account service too, so it opts out of the authenticator.
public struct RefreshTokenAPI: API {
    public init() {}
    public var service: ServiceID { .account }
    public var path: String { "/auth/token" }
    public var method: HTTPRequest.Method { .post }
    public var paramEncoding: ParamEncoding { .json }
    public var authenticates: Bool { false }
}

/// Who is signed in: needs the token.
public struct ProfileAPI: API {
    public init() {}
    public var service: ServiceID { .account }
    public var path: String { "/auth/me" }
    public var method: HTTPRequest.Method { .get }
}

/// A listing photo, sent as a multipart form.
public struct PhotoUploadAPI: API {
    public init() {}
    public var service: ServiceID { .account }
    public var path: String { "/upload/multipart" }
    public var method: HTTPRequest.Method { .post }
    public var timeout: Duration { .seconds(120) }
}

/// A floor plan file, downloaded to the caches role.
public struct FloorPlanAPI: API {
    public init() {}
    public var service: ServiceID { .account }
    public var path: String { "/files/blob" }
    public var method: HTTPRequest.Method { .get }
    public var timeout: Duration { .seconds(300) }
}
