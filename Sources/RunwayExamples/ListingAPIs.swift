public import Crypto
import Foundation
public import HTTPTypes
public import Runway

extension ServiceID {
    /// The house-listing service of the examples.
    public static let listings: ServiceID = "listings"
}

/// The listing service: `{"code":0,"data":…}` envelopes, a base URL per environment.
///
/// - parameters:
///   - baseURL: Where the service runs in this process (the demo server's address).
///   - signer: Signs every request, when the server verifies signatures.
public func listingService(
    baseURL: String, environment: Runway.Environment = .develop, signer: (any RequestSigner)? = nil
) -> Service {
    Service(
        id: .listings,
        environment: environment,
        baseURLs: [.develop: baseURL, .releaseCandidate: baseURL, .release: "https://listings.example.com"],
        commonParams: ["client": "runway-demo"],
        convention: .codeEnvelope(),
        credentials: .init(signer: signer)
    )
}

/// The demo's signing key: the app and the demo server share it. A real app's key comes from
/// its build configuration or a key store, never from source.
public enum DemoSigningKey {
    /// The key id the server looks the secret up by.
    public static let keyID = "runway-demo-2026"
    /// The demo secret (32 bytes).
    public static let secret = SymmetricKey(data: Data("runway-demo-secret-not-for-production".utf8.prefix(32)))
}

/// A listing API of one kind: the three differ only in path and item keys.
public protocol ListingAPI: PagedAPI {
    /// The key prefix of this API's items (`esf`, `zf`, `xf`).
    var keyPrefix: String { get }
}

extension ListingAPI {
    public var service: ServiceID { .listings }
    public var method: HTTPRequest.Method { .get }
    public var path: String { "/listings/\(keyPrefix)" }
    public var pageSize: Int { 10 }
}

/// Second-hand homes: items keyed `esf_…`.
public struct SecondHandListAPI: ListingAPI {
    public init() {}
    public var keyPrefix: String { "esf" }
}

/// Rentals: items keyed `zf_…`. Filters change often, so only the latest load matters.
public struct RentalListAPI: ListingAPI {
    public init() {}
    public var keyPrefix: String { "zf" }
    public var requestStrategy: RequestStrategy { .cancelInFlight }
}

/// New homes: items keyed `xf_…`. A refresh while one is in flight is ignored.
public struct NewHomeListAPI: ListingAPI {
    public init() {}
    public var keyPrefix: String { "xf" }
    public var requestStrategy: RequestStrategy { .ignoreNewWhileLoading }
}

/// One listing's detail.
public struct ListingDetailAPI: API {
    /// The kind's key prefix.
    public var keyPrefix: String
    /// The listing's identifier.
    public var id: Int

    public init(keyPrefix: String, id: Int) {
        self.keyPrefix = keyPrefix
        self.id = id
    }

    public var service: ServiceID { .listings }
    public var method: HTTPRequest.Method { .get }
    public var path: String { "/listings/\(keyPrefix)/\(id)" }
}
