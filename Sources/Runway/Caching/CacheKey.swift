import Crypto
import Foundation
public import HTTPTypes

/// The identity of a cached response: SHA-256 of a canonical text of everything that decides the
/// response.
///
/// Service, environment and its base URL, API name, method, path, the params **sorted** by name
/// (so `a=1&b=2` and `b=2&a=1` share an entry), the API's cache version, its sensitive component
/// (a user id, so one user never sees another's data), and the request header fields that vary
/// the answer: `Accept-Language` and the policy's ``CachePolicy/varyingHeaderFields``. Params the API
/// declares as not affecting the response (timestamps, nonces) are left out.
///
/// A request that carries `Authorization` or `Cookie` (in the service's common header fields or
/// the API's own, applied by the service's ``Authentication``, from its ``CookieJar``, or by a
/// ``RequestAdapter`` that may write credentials) has no key unless the API's policy names a
/// ``CachePolicy/sensitiveComponent``: whose answer it is cannot be told from the key, so it is
/// never cached. With one, the key also holds the service's sign-in (``SignInEpoch``): after a
/// ``Authentication/reset()`` the answers of the sign-in before are not found.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// Lowercase hex SHA-256 of ``canonical``.
    public let hash: String
    /// The canonical text the hash is taken of.
    public let canonical: String
    /// The header fields the service and the API give the request: what a response's `Vary`
    /// is matched against (``CacheVariant``). Not part of the identity.
    let requestFields: HTTPFields

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool { lhs.canonical == rhs.canonical }

    public func hash(into hasher: inout Hasher) { hasher.combine(canonical) }

    init?(api: some API, service: Service, params: Parameters) {
        var fields = service.commonHeaders
        for field in api.headers { fields[fields: field.name] = [] }
        fields.append(contentsOf: api.headers)
        requestFields = fields
        let carriesCredential = fields[.authorization] != nil || fields[.cookie] != nil
            || (service.credentials.authentication != nil && api.authenticates) || service.credentials.cookies != nil
            || Engine.adapters(of: api, service: service).contains { $0.writesCredentials }
        let policy = api.cachePolicy
        if policy.sensitiveComponent == nil, carriesCredential { return nil }
        var kept = service.commonParams
        kept.merge(params) { _, own in own }
        for ignored in policy.ignoredParams { kept.removeValue(forKey: ignored) }
        let paramsText = (try? JSON.object(kept).encoded()).map { String(decoding: $0, as: UTF8.self) } ?? "\(kept)"
        var varying = [HTTPField.Name.acceptLanguage]
        for name in policy.varyingHeaderFields where !varying.contains(name) { varying.append(name) }
        let varyingText = varying.map { "\($0.canonicalName)=\(fields[values: $0].joined(separator: ","))" }
            .joined(separator: "\n")
        let parts = [
            "runway-cache-2", service.id.rawValue, service.environment.rawValue, service.baseURL ?? "", api.name,
            api.method.rawValue, api.path, paramsText, "v\(policy.version)", policy.sensitiveComponent ?? "",
            varyingText, carriesCredential ? (service.credentials.authentication?.epoch.description ?? "") : "",
        ]
        // Lengths first, so no choice of values can make two different keys share a text.
        canonical = parts.map { "\($0.utf8.count):\($0)" }.joined(separator: "|")
        var text = canonical
        // Hashed from the text's own bytes: `Data(canonical.utf8)` copies them and asks the
        // runtime about the sequence's type (a search of every conformance the first time).
        hash = RequestSignature.hex(text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
    }

    public var description: String { hash }
}

/// One cached response, as both tiers keep it.
@_spi(Benchmarks) public struct CachedEntry: Sendable {
    @_spi(Benchmarks) public internal(set) var key: String
    var status: Int
    /// The response's header fields as a cached answer replays them: in order, repeated fields
    /// apart, none that sets or asks for a credential (``ResponseCache/neverStored``).
    var headers: HTTPFields
    var body: Data
    /// The parsed body, kept in memory so a memory hit parses nothing.
    var json: JSON? {
        didSet { jsonCost = json?.approximateMemoryCost ?? 0 }
    }
    /// What the parsed tree holds in memory, counted once when it is set.
    private(set) var jsonCost = 0
    var storedAt: Date
    /// When the entry stops being fresh in the tier holding it.
    var expiresAt: Date
    var apiName: String
    var sensitiveComponent: String?
    /// The URL that answered, after redirects.
    var url: String?
    /// The request's values of the fields the response's `Vary` names (``CacheVariant``);
    /// `nil` without `Vary`.
    var variant: String?

    /// What the entry holds: the body, its parsed tree (often several times the body), and the
    /// entry itself.
    var cost: Int { body.count + jsonCost + 256 }

    @_spi(Benchmarks) public init(
        key: String, status: Int, headers: HTTPFields, body: Data, json: JSON?, storedAt: Date, expiresAt: Date,
        apiName: String, sensitiveComponent: String?, url: String? = nil, variant: String? = nil
    ) {
        self.key = key
        self.status = status
        self.headers = headers
        self.body = body
        self.json = json
        self.jsonCost = json?.approximateMemoryCost ?? 0
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.apiName = apiName
        self.sensitiveComponent = sensitiveComponent
        self.url = url
        self.variant = variant
    }

    /// The body, for benchmarks that read entries back.
    @_spi(Benchmarks) public var bytes: Data { body }
}
