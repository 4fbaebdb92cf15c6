import Crypto
import Foundation

/// The identity of a cached response: SHA-256 of a canonical text of everything that decides the
/// response.
///
/// Service, environment and its base URL, API name, method, path, the params **sorted** by name
/// (so `a=1&b=2` and `b=2&a=1` share an entry), the API's cache version and its sensitive component
/// (a user id, so one user never sees another's data). Params the API declares as not affecting
/// the response (timestamps, nonces) are left out.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// Lowercase hex SHA-256 of ``canonical``.
    public let hash: String
    /// The canonical text the hash is taken of.
    public let canonical: String

    init(api: some API, service: Service, params: Parameters) {
        var kept = service.commonParams
        kept.merge(params) { _, own in own }
        for ignored in api.cacheIgnoredParams { kept.removeValue(forKey: ignored) }
        let paramsText = (try? JSON.object(kept).encoded()).map { String(decoding: $0, as: UTF8.self) } ?? "\(kept)"
        let parts = [
            "runway-cache-1", service.id.rawValue, service.environment.rawValue, service.baseURL ?? "", api.name,
            api.method.rawValue, api.path, paramsText, "v\(api.cacheVersion)", api.cacheSensitiveComponent ?? "",
        ]
        // Lengths first, so no choice of values can make two different keys share a text.
        canonical = parts.map { "\($0.utf8.count):\($0)" }.joined(separator: "|")
        hash = RequestSignature.hex(SHA256.hash(data: Data(canonical.utf8)))
    }

    public var description: String { hash }
}

/// One cached response, as both tiers keep it.
@_spi(Benchmarks) public struct CachedEntry: Sendable {
    @_spi(Benchmarks) public internal(set) var key: String
    var status: Int
    var headers: [String: String]
    var body: Data
    /// The parsed body, kept in memory so a memory hit parses nothing.
    var json: JSON?
    var storedAt: Date
    /// When the entry stops being fresh in the tier holding it.
    var expiresAt: Date
    var apiName: String
    var sensitiveComponent: String?

    var cost: Int { body.count + 256 }

    @_spi(Benchmarks) public init(
        key: String, status: Int, headers: [String: String], body: Data, json: JSON?, storedAt: Date, expiresAt: Date,
        apiName: String, sensitiveComponent: String?
    ) {
        self.key = key
        self.status = status
        self.headers = headers
        self.body = body
        self.json = json
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.apiName = apiName
        self.sensitiveComponent = sensitiveComponent
    }

    /// The body, for benchmarks that read entries back.
    @_spi(Benchmarks) public var bytes: Data { body }
}
